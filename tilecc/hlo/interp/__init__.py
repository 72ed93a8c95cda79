"""The HLO interpreter's parts: values and step types (values), the opcode -> step table
(steps), the step builders by family (basic_steps, called_steps, collective_steps,
custom_calls, conv, gather, select_scatter, rng_steps) and the numpy semantics they use
(elementwise, complex_math, shapes, dot, reduce, sort, rng, collectives). The driver that
compiles and runs computations is tilecc.hlo.interpreter."""
