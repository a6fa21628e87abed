"""openmined.psi's Python usage, as its README and tests show it, for the import swap.

  python openmined_usage.py MODULE SERVER_KEY_HEX CLIENT_KEY_HEX

MODULE is the module a program would import as `psi`: `private_set_intersection.python`
(openmined.psi 2.0.6) or `lockstep.psi`. The program is written against openmined.psi's public
API alone (server/client, DataStructure, the messages' SerializeToString/ParseFromString) and
prints one JSON object: every message's bytes (hex) and every intersection, for each data
structure, both modes, and the edge sets (empty, one element, unicode, a repeated value). Run
under both modules with the same keys, the two outputs must be equal (bindings/python/tests/).
"""

import importlib
import json
import sys

psi = importlib.import_module(sys.argv[1])
SERVER_KEY = bytes.fromhex(sys.argv[2])
CLIENT_KEY = bytes.fromhex(sys.argv[3])

SETS = {
    "emails": (
        [f"person{i}@example.org" for i in range(0, 300, 2)],
        [f"person{i}@example.org" for i in range(0, 300, 3)],
    ),
    "empty server": ([], ["a", "b"]),
    "empty client": (["a", "b"], []),
    "one each, shared": (["only"], ["only"]),
    "one each, apart": (["only"], ["other"]),
    "unicode": (
        ["José", "Zoë", "東京", "🙂", "naïve café", "a\u0000b", "Ünïcödé"],
        ["Zoë", "東京", "Jose", "🙂", "a\u0000b", "nai\u0308ve"],
    ),
    "a repeated value": (["b", "b", "x", "é"], ["q", "x", "q", "zz", "b", "é", "zz", "b", "b", "é"]),
}


def carried(message, kind):
    """The message as the other party gets it: serialized, sent, parsed into a new message."""
    received = getattr(psi, kind)()
    received.ParseFromString(message.SerializeToString())
    return received


def round_of(ds, reveal, server_values, client_values):
    server = psi.server.CreateFromKey(SERVER_KEY, reveal)
    client = psi.client.CreateFromKey(CLIENT_KEY, reveal)
    out = {}
    try:
        setup = server.CreateSetupMessage(0.001, max(len(client_values), 1), server_values, ds)
        request = client.CreateRequest(client_values)
        response = server.ProcessRequest(carried(request, "Request"))
        setup, response = carried(setup, "ServerSetup"), carried(response, "Response")
        out["setup"] = setup.SerializeToString().hex()
        out["request"] = request.SerializeToString().hex()
        out["response"] = response.SerializeToString().hex()
        out["size"] = client.GetIntersectionSize(setup, response)
        if reveal:
            out["intersection"] = list(client.GetIntersection(setup, response))
    except RuntimeError:  # both modules raise a RuntimeError for what they refuse
        out["refused"] = True
    out["keys"] = [server.GetPrivateKeyBytes().hex(), client.GetPrivateKeyBytes().hex()]
    return out


result = {}
for name, (server_values, client_values) in SETS.items():
    for ds in (psi.DataStructure.RAW, psi.DataStructure.GCS, psi.DataStructure.BLOOM_FILTER):
        for reveal in (True, False):
            result[f"{name} / {ds.name} / {'reveal' if reveal else 'size'}"] = round_of(
                ds, reveal, server_values, client_values
            )
json.dump(result, sys.stdout, indent=1, sort_keys=True)
