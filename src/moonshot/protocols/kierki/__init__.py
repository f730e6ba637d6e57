"""Kierki (the networks-course seven-contract game over TCP text): codec, game files, server, client."""
