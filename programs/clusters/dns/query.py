"""A minimal DNS client: query.py HOST:PORT NAME [tcp] asks for NAME's A records over UDP
(or TCP) and prints them, or the response code when there are none."""
import socket
import struct
import sys


def question(name):
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)


def ask(host, port, q, tcp):
    if not tcp:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.sendto(q, (host, port))
        return s.recvfrom(4096)[0]
    s = socket.create_connection((host, port), timeout=2)
    s.sendall(struct.pack(">H", len(q)) + q)
    buf = b""
    while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf[2:]


def skip_name(r, i):
    while r[i] != 0:
        if r[i] & 0xC0 == 0xC0:
            return i + 2
        i += r[i] + 1
    return i + 1


def answers(r):
    flags, qd, an = struct.unpack(">2xHHH", r[:8])
    i = 12
    for _ in range(qd):
        i = skip_name(r, i) + 4
    out = []
    for _ in range(an):
        i = skip_name(r, i)
        kind, _, _, size = struct.unpack(">HHIH", r[i:i + 10])
        i += 10
        if kind == 1:
            out.append(".".join(str(b) for b in r[i:i + 4]))
        i += size
    return flags & 0xF, out


host, port = sys.argv[1].rsplit(":", 1)
tcp = len(sys.argv) > 3 and sys.argv[3] == "tcp"
rcode, out = answers(ask(host, int(port), question(sys.argv[2]), tcp))
print(" ".join(out) if out else "rcode %d" % rcode, flush=True)
