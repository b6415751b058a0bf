"""The fuzz worker: reads pickled cases from stdin, runs each (fuzz_cases.run_case), writes the pickled outcome.
Started and replaced by fuzz_pool.WorkerPool; a crash or a hang here costs only this process."""
import os
import pickle
import resource
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    # the protocol owns the original stdout; anything the ops print goes to stderr
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    proto_in = sys.stdin.buffer
    limit = int(os.environ.get("FLOWLIKE_FUZZ_MEM", str(3 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # a huge allocation fails instead of swapping
    import flowlike as fl
    from fuzz_cases import run_case
    fl.set_num_threads(1)
    import warnings
    warnings.simplefilter("ignore")
    while True:
        head = proto_in.read(4)
        if len(head) < 4:
            return
        case = pickle.loads(proto_in.read(struct.unpack("<I", head)[0]))
        try:
            result = run_case(fl, case)
        except BaseException as e:  # noqa: BLE001 - anything escaping run_case is itself a finding
            result = ("escaped", (type(e).__name__, str(e)[:300]))
        payload = pickle.dumps(result)
        proto_out.write(struct.pack("<I", len(payload)) + payload)
        proto_out.flush()


if __name__ == "__main__":
    main()
