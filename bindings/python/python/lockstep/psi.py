"""OpenMined PSI's Python API, computed by lockstep: `import lockstep.psi as psi` in place of
`import private_set_intersection.python as psi` runs a program written for `openmined.psi` 2.x
unchanged, with the same bytes on the wire.

- `server.CreateWithNewKey(reveal_intersection)`, `server.CreateFromKey(key, reveal)`,
  `CreateSetupMessage(fpr, num_client_inputs, inputs, ds)`, `ProcessRequest(request)`,
  `GetPrivateKeyBytes()`.
- `client.CreateWithNewKey(reveal)`, `client.CreateFromKey(key, reveal)`, `CreateRequest(inputs)`,
  `GetIntersection(setup, response)`, `GetIntersectionSize(setup, response)`,
  `GetPrivateKeyBytes()`.
- `DataStructure.RAW`, `.GCS`, `.BLOOM_FILTER`; the messages `ServerSetup`, `Request`,
  `Response` with protobuf's `SerializeToString()` / `ParseFromString()`, the C++ core's
  `save()` / `Load()`, and their fields read under protobuf's names (`encrypted_elements`,
  `reveal_intersection`, `WhichOneof("data_structure")`, `gcs.div`, ...).

What it guarantees:

- **Bytes.** Every message is byte-identical to `openmined.psi`'s for the same keys and inputs,
  and byte-identical at every worker count. Messages from either module are accepted by the
  other's calls (any object with `SerializeToString()`, or `bytes`).
- **Intersections** are `openmined.psi`'s lists, in its order: raw setups by the masked values'
  order, each starter copy matched once; GCS by hash; Bloom by index (`lockstep_psi::compat`).
  Among a value the client repeats, past 16 client values, OpenMined's GCS order is its sort's and
  may differ from ours (index order).
- **Parallel.** Each step takes `workers=` (0, the default: `LOCKSTEP_WORKERS` or every core,
  fewer for a small step) and `progress=` (a callable `(done, total)`, called on the calling
  thread; raising cancels the step and the exception comes back). The GIL is let go while a step
  computes, and Ctrl-C cancels it.
- **Errors.** A refusal raises `lockstep.PsiError` (a `RuntimeError`, as OpenMined raises) with a
  stable `code`: `PSI_KEY` for a bad key, `PSI_PARAMS` for a rate or count GCS or Bloom cannot
  use, `PSI_MESSAGE` for bytes that are not the message, `PSI_ROUND` for a request of the other
  mode, `PSI_USAGE` after `close()`. A value that is not `str` or `bytes` raises `TypeError`.
- **Keys.** Made inside (`CreateWithNewKey`) from the operating system's generator, kept in
  memory wiped when the object is closed or collected, leaving only by `GetPrivateKeyBytes()`
  (a new `bytes` object, the caller's to keep safe). A key given to `CreateFromKey` is copied
  from the caller's `bytes` (which Python does not let us wipe) into a buffer wiped once read.

Values may be any iterable of `str` (UTF-8 encoded, as OpenMined encodes them) or `bytes`: a
list, a numpy array of strings, a pyarrow array or a polars series.
"""

from enum import Enum
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from lockstep import _native
from lockstep._errors import PsiError

__all__ = [
    "DataStructure",
    "PsiError",
    "Request",
    "Response",
    "ServerSetup",
    "client",
    "server",
]

Progress = Optional[Callable[[float, float], Any]]


class DataStructure(Enum):
    """The setup's data structure: the raw masked values, a Golomb-compressed set, or a Bloom
    filter."""

    RAW = "raw"
    GCS = "gcs"
    BLOOM_FILTER = "bloom"


def _format(ds: Any) -> str:
    """The engine's name of a data structure: ours, OpenMined's enum member (by name) or a name."""
    if isinstance(ds, DataStructure):
        return ds.value
    name = getattr(ds, "name", None)
    if isinstance(name, str) and name in DataStructure.__members__:
        return DataStructure[name].value
    if isinstance(ds, str) and ds in ("raw", "gcs", "bloom"):
        return ds
    raise TypeError(f"ds: a DataStructure, not {type(ds).__name__}")


def _values(inputs: Any) -> Iterable[Union[str, bytes]]:
    """The values of a list, a numpy array, a pyarrow array, a pandas or polars series."""
    for method in ("to_pylist", "to_list"):  # pyarrow; polars and pandas
        convert = getattr(inputs, method, None)
        if callable(convert) and not isinstance(inputs, (list, tuple)):
            return convert()
    return inputs


def _bytes(message: Any, name: str) -> bytes:
    """A message's bytes: ours, OpenMined's protobuf objects, or bytes."""
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    serialize = getattr(message, "SerializeToString", None)
    if callable(serialize):
        return serialize()
    raise TypeError(f"{name}: a message or bytes, not {type(message).__name__}")


class _Message:
    """One of the three `psi_proto` messages, held as its bytes; its fields read (not written)
    under protobuf's names, decoded by the engine when first asked for."""

    _kind = ""
    __slots__ = ("_data", "_fields")

    def __init__(self, data: bytes = b"") -> None:
        self._data = bytes(data)
        self._fields: Optional[Dict[str, Any]] = None

    def _field(self, name: str, default: Any) -> Any:
        if self._fields is None:
            self._fields = _native.message_fields(self._kind, self._data) if self._data else {}
        value = self._fields.get(name, default)
        return tuple(value) if isinstance(value, list) else value

    def SerializeToString(self) -> bytes:  # noqa: N802 (protobuf's name)
        """The message's bytes, as protobuf serializes it."""
        return self._data

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        """Takes `data` as this message, checked by the engine's decoder first.

        Raises `PsiError` (`PSI_MESSAGE`) for bytes that are not this message.
        """
        data = bytes(data)
        _native.check_message(self._kind, data)
        self._data, self._fields = data, None
        return len(data)

    def save(self) -> bytes:
        """The message's bytes (the C++ core's `save()`)."""
        return self._data

    @classmethod
    def Load(cls, data: bytes) -> "_Message":  # noqa: N802
        """The message in `data` (the C++ core's `Load`), checked."""
        message = cls()
        message.ParseFromString(data)
        return message

    def ByteSize(self) -> int:  # noqa: N802
        """The message's length in bytes."""
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  (mutable, as protobuf messages are)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._data)} bytes)"


class _Part:
    """A setup's data structure as protobuf shows it: its fields, read only."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(sorted(self.__dict__))})"


class ServerSetup(_Message):
    """The server's setup message: `WhichOneof("data_structure")` is `"raw"`, `"gcs"` or
    `"bloom_filter"`; `raw.encrypted_elements`, `gcs.div`, `gcs.hash_range`, `gcs.bits`,
    `bloom_filter.num_hash_functions`, `bloom_filter.bits` as protobuf names them."""

    _kind = "setup"
    __slots__ = ()

    def WhichOneof(self, name: str) -> Optional[str]:  # noqa: N802 (protobuf's name)
        """The data structure this setup holds (`name` must be `"data_structure"`)."""
        if name != "data_structure":
            raise ValueError(f"ServerSetup has no oneof {name!r}")
        return self._field("data_structure", None)

    def HasField(self, name: str) -> bool:  # noqa: N802
        """Whether the setup holds `name` (`raw`, `gcs` or `bloom_filter`)."""
        if name not in ("raw", "gcs", "bloom_filter"):
            raise ValueError(f"ServerSetup has no field {name!r}")
        return self._field("data_structure", None) == name

    @property
    def raw(self) -> _Part:
        """The raw setup's masked elements, sorted (empty unless the setup is raw)."""
        held = self.HasField("raw")
        return _Part(encrypted_elements=self._field("encrypted_elements", ()) if held else ())

    @property
    def gcs(self) -> _Part:
        """The Golomb-compressed set's parameters and bits (zeros unless the setup is GCS)."""
        held = self.HasField("gcs")
        return _Part(
            div=self._field("div", 0) if held else 0,
            hash_range=self._field("hash_range", 0) if held else 0,
            bits=self._field("bits", b"") if held else b"",
        )

    @property
    def bloom_filter(self) -> _Part:
        """The Bloom filter's hash count and bits (zeros unless the setup is Bloom)."""
        held = self.HasField("bloom_filter")
        return _Part(
            num_hash_functions=self._field("num_hash_functions", 0) if held else 0,
            bits=self._field("bits", b"") if held else b"",
        )


class Request(_Message):
    """The client's request: `reveal_intersection`, `encrypted_elements`."""

    _kind = "request"
    __slots__ = ()

    @property
    def reveal_intersection(self) -> bool:
        """Whether the client asks for the intersection itself."""
        return self._field("reveal_intersection", False)

    @property
    def encrypted_elements(self) -> Tuple[bytes, ...]:
        """The client's masked values, in its order."""
        return self._field("encrypted_elements", ())


class Response(_Message):
    """The server's response: `encrypted_elements`."""

    _kind = "response"
    __slots__ = ()

    @property
    def encrypted_elements(self) -> Tuple[bytes, ...]:
        """The request's elements masked again, in its order (sorted for a size-only one)."""
        return self._field("encrypted_elements", ())


class _Party:
    """What a server and a client share: the key, closing, the context manager."""

    data: Any

    def GetPrivateKeyBytes(self) -> bytes:  # noqa: N802
        """The key's 32 big-endian bytes. Only to make another instance of this party: never
        send it to the other."""
        return self.data.export_key()

    def close(self) -> None:
        """Wipes the key now (collection does it too); later calls raise `PsiError`."""
        self.data.close()

    def __enter__(self) -> "_Party":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class server(_Party):  # noqa: N801 (openmined.psi's name)
    """The party that publishes its masked set and answers requests."""

    def __init__(self, data: Any) -> None:
        self.data = data

    @classmethod
    def CreateWithNewKey(cls, reveal_intersection: bool) -> "server":  # noqa: N802
        """A server with a fresh key that answers requests revealing the intersection or, for
        `False`, only its size."""
        return cls(_native.Server.generate(bool(reveal_intersection)))

    @classmethod
    def CreateFromKey(cls, key_bytes: bytes, reveal_intersection: bool) -> "server":  # noqa: N802
        """A server with an existing key (big-endian bytes, as `GetPrivateKeyBytes` gives)."""
        return cls(_native.Server.from_key(bytes(key_bytes), bool(reveal_intersection)))

    def CreateSetupMessage(  # noqa: N802
        self,
        fpr: float,
        num_client_inputs: int,
        inputs: Iterable[Union[str, bytes]],
        ds: Any = DataStructure.GCS,
        *,
        workers: int = 0,
        progress: Progress = None,
    ) -> ServerSetup:
        """The setup message over `inputs`, for a client of `num_client_inputs` values whose
        whole query has false-positive probability `fpr` (GCS and Bloom; a raw setup ignores
        both)."""
        data = self.data.setup(
            _values(inputs), _format(ds), float(fpr), int(num_client_inputs), workers, progress
        )
        return ServerSetup(data)

    def ProcessRequest(  # noqa: N802
        self, client_request: Any, *, workers: int = 0, progress: Progress = None
    ) -> Response:
        """The response to a client's request (ours, OpenMined's, or its bytes)."""
        return Response(self.data.respond(_bytes(client_request, "client_request"), workers, progress))


class client(_Party):  # noqa: N801
    """The party that asks which of its values the server holds."""

    def __init__(self, data: Any) -> None:
        self.data = data

    @classmethod
    def CreateWithNewKey(cls, reveal_intersection: bool) -> "client":  # noqa: N802
        """A client with a fresh key, learning the intersection or, for `False`, its size."""
        return cls(_native.Client.generate(bool(reveal_intersection)))

    @classmethod
    def CreateFromKey(cls, key_bytes: bytes, reveal_intersection: bool) -> "client":  # noqa: N802
        """A client with an existing key."""
        return cls(_native.Client.from_key(bytes(key_bytes), bool(reveal_intersection)))

    def CreateRequest(  # noqa: N802
        self, data: Iterable[Union[str, bytes]], *, workers: int = 0, progress: Progress = None
    ) -> Request:
        """The request over the client's values, in order."""
        return Request(self.data.request(_values(data), workers, progress))

    def GetIntersection(  # noqa: N802
        self, server_setup: Any, server_response: Any, *, workers: int = 0, progress: Progress = None
    ) -> List[int]:
        """The indexes of the client's values the server holds, in OpenMined's order."""
        return self.data.intersect(
            _bytes(server_setup, "server_setup"),
            _bytes(server_response, "server_response"),
            workers,
            progress,
        )

    def GetIntersectionSize(  # noqa: N802
        self, server_setup: Any, server_response: Any, *, workers: int = 0, progress: Progress = None
    ) -> int:
        """How many of the client's values the server holds."""
        return self.data.intersection_size(
            _bytes(server_setup, "server_setup"),
            _bytes(server_response, "server_response"),
            workers,
            progress,
        )
