"""Apache Thrift's compact protocol, the encoding of a Parquet file's footer and page indexes: a struct read
into its fields (id → type and value, unknown ones kept) and written back, so that a reader can change a
field (an offset) and leave every other byte's meaning as it was."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the compact protocol's type codes (a bool field carries its value in its type: TRUE or FALSE)
TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)
_INTEGERS = (I16, I32, I64)


@dataclass
class Struct:
    fields: dict[int, tuple[int, Any]] = field(default_factory=dict)  # id → (type, value)

    def get(self, number: int, default: Any = None) -> Any:
        return self.fields[number][1] if number in self.fields else default

    def set(self, number: int, value: Any) -> None:
        self.fields[number] = (self.fields[number][0], value)


@dataclass(frozen=True)
class Raw:
    """A value kept as its encoded bytes, where a shape says so: written back as it was, never looked into."""
    data: bytes


RAW = "raw"
# Which fields of a struct to keep as their bytes: field id → RAW, or the shape of a struct field (of a list
# field: of its struct elements). A field the shape does not name is read whole.
Shape = dict[int, Any]


@dataclass
class Sequence:
    """A list or set: its elements' type and the elements (a bool element as its byte, as read)."""
    element_type: int
    items: list


@dataclass
class Map:
    key_type: int
    value_type: int
    items: list[tuple[Any, Any]]


class Reader:
    """Reads values from `data` at `at` (written for speed: a footer holds thousands of fields)."""

    def __init__(self, data: bytes | memoryview, at: int = 0):
        self.data, self.at = bytes(data), at

    def _varint(self) -> int:
        data, at = self.data, self.at
        byte = data[at]
        if byte < 0x80:  # most are one byte
            self.at = at + 1
            return byte
        shift = result = 0
        while True:
            byte = data[at]
            at += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.at = at
                return result
            shift += 7

    def _zigzag(self) -> int:
        n = self._varint()
        return (n >> 1) ^ -(n & 1)

    def struct(self, shape: Shape | None = None) -> Struct:
        fields: dict[int, tuple[int, Any]] = {}
        data, last, value = self.data, 0, self.value
        at = self.at
        while True:
            header = data[at]
            at += 1
            if header == 0:
                self.at = at
                return Struct(fields)
            kind, delta = header & 0x0F, header >> 4
            if delta:
                last += delta
            else:
                self.at = at
                last = self._zigzag()
                at = self.at
            if shape is not None and last in shape and kind != TRUE and kind != FALSE:
                self.at = at
                if shape[last] == RAW:
                    self._skip(kind)
                    fields[last] = (kind, Raw(data[at:self.at]))
                else:
                    fields[last] = (kind, value(kind, shape[last]))
                at = self.at
                continue
            if kind == I32 or kind == I64 or kind == I16:  # most fields: integers and binaries, read here
                n = shift = 0  # _varint in line: a call for each field was a third of reading a footer
                while True:
                    byte = data[at]
                    at += 1
                    n |= (byte & 0x7F) << shift
                    if byte < 0x80:
                        break
                    shift += 7
                fields[last] = (kind, (n >> 1) ^ -(n & 1))
                continue
            if kind == BINARY:
                size = data[at]
                if size < 0x80:
                    at += 1 + size
                    fields[last] = (kind, data[at - size:at])
                    continue
            elif kind == TRUE or kind == FALSE:
                fields[last] = (TRUE, kind == TRUE)
                continue
            self.at = at
            fields[last] = (kind, value(kind))
            at = self.at

    def value(self, kind: int, shape: Shape | None = None) -> Any:
        if kind == I32 or kind == I64 or kind == I16:
            n = self._varint()
            return (n >> 1) ^ -(n & 1)
        if kind == STRUCT:
            return self.struct(shape)
        if kind == BINARY:
            size = self._varint()
            self.at += size
            return self.data[self.at - size:self.at]
        if kind in (LIST, SET):
            header = self.data[self.at]
            self.at += 1
            size = header >> 4 if header >> 4 != 15 else self._varint()
            element = header & 0x0F
            if element == STRUCT:
                return Sequence(element, [self.struct(shape) for _ in range(size)])
            if element == I32 and all(b < 0x80 for b in self.data[self.at:self.at + size]):  # small integers
                values = [(b >> 1) ^ -(b & 1) for b in self.data[self.at:self.at + size]]
                self.at += size
                return Sequence(element, values)
            return Sequence(element, [self.value(element) for _ in range(size)])
        if kind in (BYTE, TRUE, FALSE):  # a byte, or a bool inside a list (as its byte)
            self.at += 1
            return self.data[self.at - 1]
        if kind == DOUBLE:
            self.at += 8
            return self.data[self.at - 8:self.at]
        if kind == MAP:
            size = self._varint()
            if not size:
                return Map(0, 0, [])
            types = self.data[self.at]
            self.at += 1
            key, value = types >> 4, types & 0x0F
            return Map(key, value, [(self.value(key), self.value(value)) for _ in range(size)])
        raise ValueError(f"not a Thrift compact type: {kind} at byte {self.at}")

    def _skip(self, kind: int) -> None:
        """Skip past a value of `kind` (a bool inside a list is its byte; in a struct it has none, and is not
        skipped here), looking at no more of it than its end needs."""
        data = self.data
        if kind == I32 or kind == I64 or kind == I16:
            while data[self.at] >= 0x80:
                self.at += 1
            self.at += 1
        elif kind == BINARY:
            size = self._varint()
            self.at += size
        elif kind == STRUCT:
            while True:
                header = data[self.at]
                self.at += 1
                if header == 0:
                    return
                if not header >> 4:
                    self._varint()  # the field's id
                if header & 0x0F not in (TRUE, FALSE):
                    self._skip(header & 0x0F)
        elif kind in (LIST, SET):
            header = data[self.at]
            self.at += 1
            size = header >> 4 if header >> 4 != 15 else self._varint()
            for _ in range(size):
                self._skip(header & 0x0F)
        elif kind in (BYTE, TRUE, FALSE):
            self.at += 1
        elif kind == DOUBLE:
            self.at += 8
        elif kind == MAP:
            size = self._varint()
            if size:
                types = data[self.at]
                self.at += 1
                for _ in range(size):
                    self._skip(types >> 4)
                    self._skip(types & 0x0F)
        else:
            raise ValueError(f"not a Thrift compact type: {kind} at byte {self.at}")


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def write_struct(out: bytearray, written: Struct) -> None:
    last = 0
    for number in sorted(written.fields):
        kind, value = written.fields[number]
        if kind == TRUE:
            kind = TRUE if value else FALSE
        delta = number - last
        if 0 < delta <= 15:
            out.append(delta << 4 | kind)
        else:
            out.append(kind)
            _zigzag(out, number)
        if kind not in (TRUE, FALSE):
            write_value(out, kind, value)
        last = number
    out.append(0)


def write_value(out: bytearray, kind: int, value: Any) -> None:
    if value.__class__ is Raw:
        out += value.data
    elif kind in _INTEGERS:
        _zigzag(out, value)
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind == STRUCT:
        write_struct(out, value)
    elif kind in (LIST, SET):
        size = len(value.items)
        out.append((size if size < 15 else 15) << 4 | value.element_type)
        if size >= 15:
            _varint(out, size)
        for item in value.items:
            write_value(out, value.element_type, item)
    elif kind in (BYTE, TRUE, FALSE):
        out.append(value & 0xFF)
    elif kind == DOUBLE:
        out += value
    elif kind == MAP:
        _varint(out, len(value.items))
        if value.items:
            out.append(value.key_type << 4 | value.value_type)
            for key, item in value.items:
                write_value(out, value.key_type, key)
                write_value(out, value.value_type, item)
    else:
        raise ValueError(f"not a Thrift compact type: {kind}")


def encode(written: Struct) -> bytes:
    out = bytearray()
    write_struct(out, written)
    return bytes(out)


def decode(data: bytes | memoryview, shape: Shape | None = None) -> Struct:
    """Return a struct, the fields `shape` names kept as their bytes."""
    return Reader(data).struct(shape)


