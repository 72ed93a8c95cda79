"""Host runtime: executes host programs on N ranks with symmetric window memory and the
credit-barrier allreduce (world.py, collectives.py, interpreter.py)."""
