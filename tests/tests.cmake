# Language, GC and REPL tests are registered here (see tests/lang/run.sh).
