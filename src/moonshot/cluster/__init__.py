"""Many server processes, one set of tables: membership, leases, remote seats and adoption
through Redis (see :mod:`moonshot.cluster.node`), and the messages between the processes
(:mod:`moonshot.cluster.messages`)."""
