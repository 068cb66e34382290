"""A minimal client of Azurite's blob service for the remote-load tests, on the standard
library only: creates a container, or downloads a blob, signing each request with the
emulator's well-known account key (Shared Key authorization).

    azurite_client.py ENDPOINT create CONTAINER
    azurite_client.py ENDPOINT get CONTAINER BLOB OUTFILE
"""

import base64
import hashlib
import hmac
import sys
import urllib.error
import urllib.request
from email.utils import formatdate

ACCOUNT = "devstoreaccount1"
# The emulator's published development key (not a secret).
KEY = base64.b64decode(
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def request(endpoint, method, path, query=""):
    """A signed request for ``/ACCOUNT/path`` (``query`` is ``name=value`` or empty)."""
    headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    content_type = "application/octet-stream" if method == "PUT" else ""
    canonical_headers = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
    resource = f"/{ACCOUNT}/{ACCOUNT}/{path}"
    if query:
        name, value = query.split("=", 1)
        resource += f"\n{name}:{value}"
    # VERB, then the standard headers (all empty but Content-Type), then the rest.
    to_sign = f"{method}\n\n\n\n\n{content_type}\n" + "\n" * 6 + canonical_headers + resource
    signature = base64.b64encode(hmac.new(KEY, to_sign.encode(), hashlib.sha256).digest())
    url = f"{endpoint}/{ACCOUNT}/{path}" + (f"?{query}" if query else "")
    req = urllib.request.Request(url, method=method, data=b"" if method == "PUT" else None)
    if content_type:
        req.add_header("Content-Type", content_type)
    for k, v in headers.items():
        req.add_header(k, v)
    req.add_header("Authorization", f"SharedKey {ACCOUNT}:{signature.decode()}")
    return urllib.request.urlopen(req)


def main():
    endpoint, command, *args = sys.argv[1:]
    if command == "create":
        try:
            request(endpoint, "PUT", args[0], "restype=container").read()
        except urllib.error.HTTPError as e:
            if e.code != 409:  # 409: the container exists already
                raise
    elif command == "get":
        container, blob, out = args
        with request(endpoint, "GET", f"{container}/{blob}") as r, open(out, "wb") as f:
            f.write(r.read())
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
