"""An independent event-stream server for tests/protocols/sse_starlette.rs:
sse-starlette's EventSourceResponse under uvicorn (PyPI), nobody here wrote it.
/events/{n}/{ms}: n events (id i, data i), one every ms, then the end of the
body. Usage: python3 sse_app.py PORT"""

import asyncio
import sys

import uvicorn
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.routing import Route


async def events(request):
    n = int(request.path_params["n"])
    ms = int(request.path_params["ms"])

    async def stream():
        for i in range(n):
            if i:
                await asyncio.sleep(ms / 1000)
            yield {"id": str(i), "data": str(i)}

    # No keep-alive pings: they would be comments, and the count must be n.
    return EventSourceResponse(stream(), ping=3600)


app = Starlette(routes=[Route("/events/{n:int}/{ms:int}", events)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
