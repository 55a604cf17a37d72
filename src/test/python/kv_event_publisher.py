"""A GPU engine's KV event publisher on the wire vLLM and SGLang use, written from their documented
format with pyzmq (libzmq) and msgpack — an outside check of Tandem's JeroMQ/msgpack-java subscriber.

    python3 kv_event_publisher.py array|map BLOCK_SIZE

Binds a PUB and a ROUTER (replay) socket on 127.0.0.1, prints "ENDPOINTS <pub> <replay>", then reads
commands from stdin, one per line, answering "OK" after each:
    prefill <token ids, comma-separated>   store the prompt's full blocks it does not hold (one batch)
    evict                                  remove every block it holds (one batch)
    withhold <n>                           number the next n batches but do not publish them
    quit
Messages are [topic, 8-byte big-endian seq from 0, msgpack batch]. "array" encodes as msgspec's
array_like structs (tagged arrays, integer hashes: unsigned 64-bit), "map" as maps with a "type" tag
(SHA-256 bytes as hashes, fields newer vLLM adds). The replay socket answers [b"", start seq] with
[b"", seq, payload] for each buffered batch from start, then [b"", -1, b""].
"""

import hashlib
import select
import sys
import time

import msgpack
import zmq


def main() -> None:
    encoding, block_size = sys.argv[1], int(sys.argv[2])
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub_port = pub.bind_to_random_port("tcp://127.0.0.1")
    replay = ctx.socket(zmq.ROUTER)
    replay_port = replay.bind_to_random_port("tcp://127.0.0.1")
    print(f"ENDPOINTS tcp://127.0.0.1:{pub_port} tcp://127.0.0.1:{replay_port}", flush=True)

    held = {}  # prefix (tuple of tokens) -> hash
    buffer = []
    withhold = 0

    def block_hash(parent, tokens):
        digest = hashlib.sha256((parent if isinstance(parent, bytes) else b"") + bytes(str(tokens), "ascii")).digest()
        if encoding == "map":
            return digest
        return int.from_bytes(digest[:8], "big")  # an unsigned 64-bit int, past Java's long half the time

    def event(tag, **fields):
        if encoding == "map":
            return dict(type=tag, **fields)
        return [tag] + list(fields.values())

    def publish(events):
        nonlocal withhold
        ts = time.time()
        if encoding == "map":
            batch = {"ts": ts, "events": events, "data_parallel_rank": 0}
        else:
            batch = [ts, events, 0]
        payload = msgpack.packb(batch, use_bin_type=True)
        seq = len(buffer)
        buffer.append(payload)
        if withhold > 0:
            withhold -= 1
            return
        pub.send_multipart([b"", seq.to_bytes(8, "big"), payload])

    def serve_replay():
        while replay.poll(0):
            identity, _, start = replay.recv_multipart()
            for seq in range(int.from_bytes(start, "big"), len(buffer)):
                replay.send_multipart([identity, b"", seq.to_bytes(8, "big"), buffer[seq]])
            replay.send_multipart([identity, b"", (-1).to_bytes(8, "big", signed=True), b""])

    while True:
        # Replay requests may come while the test waits: serve them until the next command.
        while not select_stdin(0.02):
            serve_replay()
        line = sys.stdin.readline()
        if not line:
            break
        command, _, arg = line.strip().partition(" ")
        if command == "prefill":
            prompt = [int(t) for t in arg.split(",")]
            hashes, parent, first_parent, start = [], None, None, None
            for b in range(len(prompt) // block_size):
                key = tuple(prompt[:(b + 1) * block_size])
                h = held.get(key)
                if h is None:
                    h = block_hash(parent, prompt[b * block_size:(b + 1) * block_size])
                    held[key] = h
                    if start is None:
                        start, first_parent = b, parent
                    hashes.append(h)
                parent = h
            if hashes:
                tokens = prompt[start * block_size:(start + len(hashes)) * block_size]
                fields = dict(block_hashes=hashes, parent_block_hash=first_parent, token_ids=tokens,
                              block_size=block_size, lora_id=None, medium="GPU")
                if encoding == "map":
                    fields.update(lora_name=None, extra_keys=None, group_idx=0, kv_cache_spec_kind="full_attention")
                publish([event("BlockStored", **fields)])
        elif command == "evict":
            fields = dict(block_hashes=list(held.values()), medium="GPU")
            held.clear()
            publish([event("BlockRemoved", **fields)])
        elif command == "withhold":
            withhold = int(arg)
        elif command == "quit":
            break
        print("OK", flush=True)
    pub.close(0)
    replay.close(0)
    ctx.term()


def select_stdin(timeout):
    return bool(select.select([sys.stdin], [], [], timeout)[0])


if __name__ == "__main__":
    main()
