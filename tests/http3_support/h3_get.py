"""An independent HTTP/3 client for the interop test (tests/http3_target_oha.rs):
aioquic's own QUIC and HTTP/3 (H3Connection), nothing of stampede's.

Usage: h3_get.py URL COUNT STREAMS
Sends COUNT GETs for URL over one QUIC connection, at most STREAMS at a time
(certificate not verified: the target's is self-signed), and prints one JSON
object: the negotiated ALPN and, per status, how many answers and the body
sizes seen.
"""

import asyncio
import json
import ssl
import sys
from urllib.parse import urlparse

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class H3Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.pending = {}  # stream id -> (future, status, body)

    async def get(self, authority, path):
        stream_id = self._quic.get_next_available_stream_id()
        headers = [(b":method", b"GET"), (b":scheme", b"https"),
                   (b":authority", authority.encode()), (b":path", path.encode())]
        self.http.send_headers(stream_id, headers, end_stream=True)
        done = self._loop.create_future()
        self.pending[stream_id] = [done, None, bytearray()]
        self.transmit()
        return await done

    def quic_event_received(self, event):
        for h3_event in self.http.handle_event(event):
            entry = self.pending.get(getattr(h3_event, "stream_id", None))
            if entry is None:
                continue
            if isinstance(h3_event, HeadersReceived):
                entry[1] = int(dict(h3_event.headers)[b":status"])
            elif isinstance(h3_event, DataReceived):
                entry[2] += h3_event.data
            if getattr(h3_event, "stream_ended", False):
                del self.pending[h3_event.stream_id]
                entry[0].set_result((entry[1], len(entry[2])))


async def main(url, count, streams):
    parsed = urlparse(url)
    path = parsed.path or "/"
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.verify_mode = ssl.CERT_NONE
    async with connect(parsed.hostname, parsed.port, configuration=config,
                       create_protocol=H3Client) as client:
        limit = asyncio.Semaphore(streams)

        async def one():
            async with limit:
                return await asyncio.wait_for(client.get(parsed.netloc, path), 10)

        answers = await asyncio.gather(*(one() for _ in range(count)))
        alpn = client._quic.tls.alpn_negotiated
    statuses = {}
    for status, size in answers:
        seen = statuses.setdefault(str(status), {"count": 0, "sizes": []})
        seen["count"] += 1
        if size not in seen["sizes"]:
            seen["sizes"].append(size)
    print(json.dumps({"alpn": alpn, "statuses": statuses}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
