"""The ``dralab`` command line: kubectl-like verbs over the library."""
