"""An independent event-stream server for tests/protocols/sse_starlette.rs:
sse-starlette's EventSourceResponse under uvicorn (PyPI), nobody here wrote it.
/events/{n}/{ms}: n events (id i, data i), one every ms, then the end of the
body. /resume/{n}/{k}: events 0..n-1 with ids, k per response and then the end
of the body, each response resuming after the Last-Event-ID it was sent (a
204 once none is left), each event with retry: 20; /seen lists the
Last-Event-ID each /resume request carried (null: none), in order.
Usage: python3 sse_app.py PORT [uvicorn|hypercorn]: uvicorn speaks HTTP/1.1;
hypercorn (PyPI) speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c), for
tests/protocols/sse_h2.rs."""

import asyncio
import sys

import uvicorn
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
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


seen = []


async def resume(request):
    n = int(request.path_params["n"])
    k = int(request.path_params["k"])
    last = request.headers.get("last-event-id")
    seen.append(last)
    start = int(last) + 1 if last is not None else 0
    if start >= n:
        # No more: an EventSource stops reconnecting (WHATWG HTML §9.2.3).
        return Response(status_code=204)

    async def stream():
        for i in range(start, min(n, start + k)):
            yield {"id": str(i), "data": str(i), "retry": 20}

    return EventSourceResponse(stream(), ping=3600)


async def seen_ids(request):
    return JSONResponse(seen)


app = Starlette(
    routes=[
        Route("/events/{n:int}/{ms:int}", events),
        Route("/resume/{n:int}/{k:int}", resume),
        Route("/seen", seen_ids),
    ]
)

if __name__ == "__main__":
    port = int(sys.argv[1])
    if sys.argv[2:] == ["hypercorn"]:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.loglevel = "WARNING"
        asyncio.run(serve(app, config))
    else:
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
