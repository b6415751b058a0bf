"""flowlike.distributed.elastic.multiprocessing: error reporting of launched workers."""
