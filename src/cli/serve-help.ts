/** `devicerail serve --help`: its own module so the help prints without loading the daemon. */
export const SERVE_HELP = `Usage: devicerail serve [--stdio | [--listen HOST:PORT] [--socket PATH]] [--token TOKEN | --local-token]

--stdio (the default): serves one JSON-RPC connection on stdin/stdout: one JSON message per line
(max 1 MiB). On end of input, every request read is answered (each within its own timeoutMs;
one sent without it may run DEVICERAIL_END_OF_INPUT_MS more, a minute by default, then is
cancelled), then it stops (exit 0); SIGINT or SIGTERM cancel what still runs and stop. When the data
directory's daemon runs (\`devicerail daemon start\`, or any command), stdin and stdout are relayed
to it instead, and its hello still reports transport stdio.

--listen HOST:PORT (or DEVICERAIL_RPC_LISTEN): serves many connections on a loopback TCP
address (127.0.0.0/8 or [::1]; port 0 lets the OS pick, and then the port is also written to
<data dir>/listen.json). The first byte of a connection picks its protocol: { NDJSON JSON-RPC; a
letter HTTP/1.1 (the HTTP API, and JSON-RPC over WebSocket at GET /rpc). Other addresses need a
token. stdin is not read. Once listening it prints one line to stdout,
{"listening":{"host":"127.0.0.1","port":NNNN}}, and nothing else. Without a token every local
user of the machine can reach the port (loopback keeps out other machines, not other users), and
serve says so on stderr.

--socket PATH (or DEVICERAIL_RPC_SOCKET): the same on a Unix socket, created 0600 in a directory
only you can write (created 0700 when missing). A stale socket is replaced; a live one is refused.

--token TOKEN (or DEVICERAIL_TOKEN, preferred: argv is visible to other users): every connection
must authenticate first: NDJSON with the line "DEVICERAIL-TOKEN <token>", HTTP and WebSocket with
"Authorization: Bearer <token>". 16 to 512 printable ASCII characters.

--local-token: the TCP listener requires a token made at start and written to
<data dir>/daemon.token (0600, removed on a clean stop), where the data directory's own clients
read it; the Unix socket needs none (it admits only this user, see the README's Security). The
daemon that commands start in the background runs with it. A --token or DEVICERAIL_TOKEN given
as well wins, on both listeners, and no file is written.

Stops gracefully on SIGINT or SIGTERM (exit 0).
`;
