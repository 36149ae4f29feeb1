#!/usr/bin/env python3
"""settle_callgrind.py -- Redis instructions per settled round, counted by callgrind.

CPU time on a shared machine moves by +-30 % from run to run; instruction counts do not. This
starts redis-server under valgrind --tool=callgrind (on a free loopback port), loads the settle
script of money/money_script.c (or of the file that held it at a git revision: money.c before
the split of issue 33), and sends batches of BATCH rounds of
3 players each, like the money writer does (same keys, arguments and layout). It counts what
Redis executes while reading and running the commands (readQueryFromClient, which includes
parsing the request, the script, every redis.call and building the reply) for B and for 2B
batches, and prints the difference per round, so that the setup (wallets, script load) cancels
out.

    money/settle_callgrind.py [--players N] [--batches B] [--batch N] [--rev GITREV]

Needs valgrind, redis-server and callgrind_annotate. Takes about 10 s.
"""
import argparse
import os
import re
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def script_text(rev):
    if rev:
        # The scripts are in money/money_script.c since money.c was split (issue 33), in
        # money/money.c at older revisions.
        for path in ('money/money_script.c', 'money/money.c'):
            r = subprocess.run(['git', '-C', ROOT, 'show', rev + ':' + path],
                               capture_output=True, text=True)
            if r.returncode == 0:
                src = r.stdout
                break
        else:
            raise SystemExit('no money script source at ' + rev + ': ' + r.stderr.strip())
    else:
        with open(os.path.join(ROOT, 'money', 'money_script.c')) as f:
            src = f.read()

    def lits(text):
        return ''.join(s.encode().decode('unicode_escape')
                       for s in re.findall(r'"((?:[^"\\]|\\.)*)"', text))
    i = src.index('#define MONEY_LUA_INT')
    prelude = lits(src[i:src.index('\n\n', i)])
    i = src.index('static const char money_lua_settle[]')
    return prelude + lits(src[i:src.index(';\n', i)])


def enc(args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=60)
        self.f = self.s.makefile('rb')

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b'-':
            raise RuntimeError(rest.decode())
        if t in (b'+', b':'):
            return rest
        if t == b'$':
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if t == b'*':
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError('bad reply %r' % line)

    def cmd(self, *args):
        self.s.sendall(enc(args))
        return self.read()


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(script, players, batches, batch):
    """Instructions in readQueryFromClient for the whole run (setup + batches)."""
    port = free_port()
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, 'callgrind.out')
    vg = subprocess.Popen(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out,
                           '--collect-atstart=no', '--toggle-collect=readQueryFromClient',
                           '/usr/bin/redis-server', '--port', str(port), '--bind', '127.0.0.1',
                           '--save', '', '--appendonly', 'no', '--dir', tmp],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                c = Conn(port)
                c.cmd('PING')
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError('redis-server under valgrind did not start')
        c.cmd('SET', '{croupier:lease:bench}:slot:1:epoch', '1')
        names = ['p%d' % i for i in range(players)]
        c.s.sendall(b''.join(enc(['SET', '{croupier:money}:wallet:' + n, '1000000000'])
                             for n in names))
        for _ in names:
            c.read()
        sha = c.cmd('SCRIPT', 'LOAD', script).decode()
        seq = 0
        for _ in range(batches):
            keys, args = [], []
            for _ in range(batch):
                seq += 1
                if players == 8:
                    b = seq % 8
                    ps = [b, (b + 1 + seq % 3) % 8, (b + 4 + seq % 4) % 8]
                else:
                    b = (seq * 104729) % players
                    ps = [b, (b + 1 + seq % 5) % players, (b + 7 + seq % 11) % players]
                x, rake = 1 + seq % 7, seq % 3
                keys += ['{croupier:money}:round:1:1:0:%d' % seq,
                         '{croupier:lease:bench}:slot:1:epoch', '{croupier:money}:rake:gen']
                keys += ['{croupier:money}:wallet:' + names[p] for p in ps]
                args += [3, 1, rake, 2 * x - rake, -x, -x]
            reply = c.cmd('EVALSHA', sha, len(keys), *keys, 604800, *args)
            if any(e[0] != b'1' for e in reply):
                raise RuntimeError('a round was not applied: %r' % reply)
        try:
            c.cmd('SHUTDOWN', 'NOSAVE')
        except (RuntimeError, OSError):
            pass
        vg.wait(timeout=120)
        ann = subprocess.run(['callgrind_annotate', out], capture_output=True, text=True).stdout
        m = re.search(r'([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS', ann)
        return int(m.group(1).replace(',', ''))
    finally:
        if vg.poll() is None:
            vg.kill()
            vg.wait()
        subprocess.run(['rm', '-rf', tmp])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--players', type=int, default=8, help='8 (money_gen) or more than 20')
    ap.add_argument('--batches', type=int, default=20)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--rev', help='take the scripts from this git revision')
    a = ap.parse_args()
    script = script_text(a.rev)
    one = run(script, a.players, a.batches, a.batch)
    two = run(script, a.players, 2 * a.batches, a.batch)
    per_round = (two - one) / (a.batches * a.batch)
    print('settle script %s, %d players, batches of %d: %.0f Redis instructions per round'
          % (a.rev or 'of the working tree', a.players, a.batch, per_round))


if __name__ == '__main__':
    main()
