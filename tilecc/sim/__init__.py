"""BIR simulator: machine state, ALU and activation tables, one executor per opcode."""
