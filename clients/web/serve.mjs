#!/usr/bin/env node
// The browser table's server for the demo and the test: the built page (dist/) over HTTP, and
// WebSocket connections to /ws forwarded to a live gateway, as a Kubernetes Service would
// (docs/demo.md "The browser table"). The gateways come from a file of "host:port" lines (the
// gateways' --ws-listen addresses), read again at every connection, so a gateway that rolls or
// dies is left out as soon as the file no longer names it; the page's SDK reconnects through
// /ws again and lands on a live one. Nothing of the protocol is read here: after the HTTP
// upgrade request (its path rewritten to the gateway's --ws-path, "/") the bytes pass through
// both ways.
//
//   node serve.mjs --listen 127.0.0.1:PORT [--root DIR] [--gateways-file FILE]
//
// Prints "serving http://HOST:PORT/" once listening; SIGTERM or SIGINT stop it.
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const args = { listen: "127.0.0.1:0", root: join(dirname(fileURLToPath(import.meta.url)), "dist"),
               "gateways-file": "", config: "" };
for (let i = 2; i < process.argv.length; i += 2) {
    const k = process.argv[i].replace(/^--/, "");
    if (!(k in args) || process.argv[i + 1] === undefined) {
        console.error(`serve: unknown flag or missing value: ${process.argv[i]}\n` +
            "usage: node serve.mjs --listen HOST:PORT [--root DIR] [--gateways-file FILE] [--config FILE]");
        process.exit(2);
    }
    args[k] = process.argv[i + 1];
}
const root = resolve(args.root);
if (!existsSync(join(root, "index.html"))) {
    console.error(`serve: ${root}/index.html is missing: build the page first (npm run build)`);
    process.exit(1);
}
const [host, portText] = args.listen.split(/:(?=[^:]*$)/);
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".map": "application/json",
                ".json": "application/json" };

/* The gateways named by the file now (empty when it is missing). */
function gateways() {
    if (args["gateways-file"] === "")
        return [];
    try {
        return readFileSync(args["gateways-file"], "utf8").split("\n").map((l) => l.trim())
            .filter((l) => /^[^\s:]+:\d+$/.test(l));
    } catch {
        return [];
    }
}

const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = path === "/config.json" && args.config !== "" ? resolve(args.config)
        : resolve(root, "." + (path === "/" ? "/index.html" : path));
    const inside = file.startsWith(root + sep) || (args.config !== "" && file === resolve(args.config));
    if ((req.method !== "GET" && req.method !== "HEAD") || !inside ||
        !existsSync(file) || !statSync(file).isFile()) {
        res.writeHead(req.method === "GET" || req.method === "HEAD" ? 404 : 405,
                      { "content-type": "text/plain" });
        res.end("not found\n");
        return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream",
                         "cache-control": "no-store" });
    if (req.method === "HEAD")
        res.end();
    else
        createReadStream(file).pipe(res);
});

server.on("upgrade", (req, sock, head) => {
    const url = new URL(req.url ?? "/", "http://x");
    const live = gateways();
    if (url.pathname !== "/ws" || live.length === 0) {
        sock.end(url.pathname !== "/ws" ? "HTTP/1.1 404 Not Found\r\n\r\n"
                                        : "HTTP/1.1 503 Service Unavailable\r\n\r\n");
        return;
    }
    const target = live[Math.floor(Math.random() * live.length)];
    const [ghost, gport] = target.split(/:(?=[^:]*$)/);
    const up = connect(Number(gport), ghost, () => {
        const lines = [`${req.method} /${url.search} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2)
            lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        up.write(lines.join("\r\n") + "\r\n\r\n");
        if (head.length > 0)
            up.write(head);
        sock.pipe(up);
        up.pipe(sock);
    });
    /* a close passes on as a FIN through the pipes (the gateway's graceful close reaches the
     * page whole); a failure of either side ends the other at once */
    up.on("error", () => sock.destroy());
    sock.on("error", () => up.destroy());
});

server.listen(Number(portText), host, () => {
    const a = server.address();
    console.log(`serving http://${host}:${typeof a === "object" && a !== null ? a.port : portText}/`);
});
for (const sig of ["SIGTERM", "SIGINT"])
    process.on(sig, () => {
        server.close();
        process.exit(0);
    });
