"""A WebSocket echo loop in Python's `websockets` (asyncio), the reference
bench/websocket-vs-http.sh measures stampede against: CONNECTIONS
connections, each sending "hello" and awaiting its echo before the next,
for SECONDS. Prints the messages answered as one JSON line.

usage: python3 ws-echo-client.py URL CONNECTIONS SECONDS
"""

import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect


async def loop(url, until, counts):
    async with connect(url, compression=None) as ws:
        while time.monotonic() < until:
            await ws.send("hello")
            await ws.recv()
            counts[0] += 1


async def main():
    url, connections, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    counts = [0]
    until = time.monotonic() + seconds
    await asyncio.gather(*(loop(url, until, counts) for _ in range(connections)))
    print(json.dumps({"messages": counts[0]}), flush=True)


asyncio.run(main())
