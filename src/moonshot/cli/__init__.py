"""The ``moonshot`` command (:mod:`moonshot.cli.main`) and its sub-commands."""
