"""A file indented with tabs."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Tabs:
	@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
	def host(self):
		buf = pld.alloc_window_buffer(64)
		d = pld.window(buf, [16], dtype=pl.FP32)
		d = pld.tensor.allreduce(d)
		return d
