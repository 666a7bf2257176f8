"""A lean asyncio OpenAI-compatible fake for throughput benchmarks (one process, no threads).

Answers every POST after a fixed latency with a chat.completion built by hindcast's own
fake (`hindcast.llm.fake.completion`), over HTTP/1.1 keep-alive on 127.0.0.1.
The threaded fake in the package is simpler but tops out near 80 requests/s here, below
what the benchmark needs to measure. Usage: python fast_fake_server.py LATENCY (prints URL).
"""

from __future__ import annotations

import asyncio
import json
import sys

from hindcast.llm.fake import Reply, completion


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float
) -> None:
    count = 0
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            body = json.loads(await reader.readexactly(length) or b"{}")
            await asyncio.sleep(latency)
            count += 1
            payload = json.dumps(
                completion(Reply(content='{"probability": 0.3}'), body.get("model", "fake"), count)
            ).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode()
                + b"\r\n\r\n"
                + payload
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        writer.close()


async def main(latency: float) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, latency), "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1])))
