# The cfrkit hand evaluator, textually included by the card kernels (handeval.pyx, range_equity.pyx,
# holdem_engine.pyx, blueprint_pluribus.pyx through this file; equity.pyx includes handeval_tables.pxi itself and
# builds the hash table on first use).  Including this file builds all the evaluator's tables at import.
include "handeval_tables.pxi"

_init_eval_tables()
