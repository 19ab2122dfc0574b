"""How Quantity and Semver values travel through cel-expr-python.

cel-expr-python cannot carry arbitrary Python objects as CEL values, but it does
carry protobuf messages whose descriptors are in the pool given to the
environment. So each custom type is a tiny message registered at import time:

* ``kubernetes.Quantity{nano: "<decimal integer>"}`` - the exact amount in
  nano-units. Only the amount is stored, so CEL's field-wise message equality
  is value equality (``quantity("1Gi") == quantity("1024Mi")``), as upstream.
* ``kubernetes.Semver{version: "<text without build metadata>"}`` - build
  metadata is dropped for the same reason: semver precedence ignores it, and
  so does upstream equality.

The type names are those of the Kubernetes CEL libraries, so type names in
compiler messages read the same as upstream's.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from dralab.api.quantity import Quantity
from dralab.api.semver import Semver, parse_semver

__all__ = [
    "QUANTITY_TYPE",
    "SEMVER_TYPE",
    "QuantityMessage",
    "SemverMessage",
    "pool",
    "quantity_from_message",
    "quantity_message",
    "semver_from_message",
    "semver_message",
]

QUANTITY_TYPE: Final = "kubernetes.Quantity"
SEMVER_TYPE: Final = "kubernetes.Semver"
_FILE: Final = "dralab/cel/kubernetes_values.proto"


def _register() -> tuple[Any, Any]:
    default = descriptor_pool.Default()
    try:
        default.FindFileByName(_FILE)
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(name=_FILE, package="kubernetes", syntax="proto3")
        string = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
        optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
        fdp.message_type.add(name="Quantity").field.add(
            name="nano", number=1, type=string, label=optional)
        fdp.message_type.add(name="Semver").field.add(
            name="version", number=1, type=string, label=optional)
        default.Add(fdp)
    return (
        message_factory.GetMessageClass(default.FindMessageTypeByName(QUANTITY_TYPE)),
        message_factory.GetMessageClass(default.FindMessageTypeByName(SEMVER_TYPE)),
    )


QuantityMessage, SemverMessage = _register()


def pool() -> Any:
    """The descriptor pool holding the value messages (the default pool)."""
    return descriptor_pool.Default()


def quantity_message(q: Quantity) -> Any:
    return QuantityMessage(nano=str(q.nano))


def quantity_from_message(message: Any) -> Quantity:
    return Quantity(int(message.nano))


def semver_message(v: Semver) -> Any:
    return SemverMessage(version=v.text.partition("+")[0])


def semver_from_message(message: Any) -> Semver:
    return parse_semver(message.version)
