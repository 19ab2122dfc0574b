"""CEL selector benchmark: evaluations per second over 10,000 synthetic devices.

Devices: 90 % ``gpu.nvidia.com`` GPUs (12 attributes incl. two versions and a
``resource.kubernetes.io/pcieRoot`` attribute, one ``memory`` capacity), 10 %
``nic.example.com`` NICs without the GPU domain (these make the quantity and
semver selectors fail at runtime, as they do upstream).

Prints device-preparation time and, per selector, evaluations/s plus the
true/false/error counts, upstream's estimated cost and our runtime bound.
Then the fast path (cel.fastpath) against full CEL, per device, for issue 34's
forms: the fast predicate on the raw device, CEL on a prepared input, and CEL
cold (the input built first, as a cold allocation does), with how many devices
the fast path decided itself. Then the hostile side: how long refusing the
issue's list-doubling selector takes, and the throughput of a selector whose
bound must be redone per device (over the limit for the largest valid device,
not for these). Prints figures; asserts nothing.
"""

from __future__ import annotations

import contextlib
import random
import time

from dralab.api.quantity import parse_quantity
from dralab.api.resource import Device, DeviceAttribute, DeviceCapacity
from dralab.api.semver import Semver, parse_semver
from dralab.cel import CelRuntimeError, DeviceInput, compile_selector, device_input
from dralab.cel.fastpath import qualifies

N_DEVICES = 10_000
ROUNDS = 3

SELECTORS = {
    "productName": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
    "quantity compareTo":
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
    "semver": 'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
}

# 13 doublings of the words of productName: over the limit only for a 64-character
# name, so the bound is redone per device (once per distinct device shape).
PER_DEVICE_BOUND = ('cel.bind(v0, device.attributes["gpu.nvidia.com"].productName.split(" "), '
                    + "".join(f"cel.bind(v{i}, v{i - 1} + v{i - 1}, " for i in range(1, 14))
                    + "size(v13) > 0" + ")" * 14)
PER_DEVICE_SAMPLE = 1000
_GPU = 'device.attributes["gpu.nvidia.com"]'
FAST_FORMS = {
    "==": f'{_GPU}.productName == "NVIDIA H100 80GB HBM3"',
    "in [...]": f'{_GPU}.productName in ["NVIDIA H100 80GB HBM3", "NVIDIA L4"]',
    "startsWith": f'{_GPU}.productName.startsWith("NVIDIA A100")',
    "endsWith": f'{_GPU}.productName.endsWith("HBM3")',
    "contains": f'{_GPU}.productName.contains("A100")',
    "matches": f'{_GPU}.productName.matches("^NVIDIA (A|H)100")',
    "presence in": f'"migCapable" in {_GPU}',
    "has()": f"has({_GPU}.pcieRoot)",
    "quantity": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
    "semver": f'{_GPU}.driverVersion.isGreaterThan(semver("550.0.0"))',
    "&&/||/!": f'({_GPU}.type == "gpu" || {_GPU}.migCapable) && '
               f'!{_GPU}.productName.contains("L4")',
}
LIST_DOUBLING = ("cel.bind(v0, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "
                 + "".join(f"cel.bind(v{i}, v{i - 1} + v{i - 1}, " for i in range(1, 26))
                 + "size(v25) > 0" + ")" * 26)

PRODUCTS = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "NVIDIA L4"]
MEMORY = ["80Gi", "40Gi", "24Gi"]
DRIVERS = ["550.54.15", "535.161.8", "560.28.3"]


def make_devices(rng: random.Random) -> list[tuple[str, dict[str, object], dict[str, object]]]:
    devices: list[tuple[str, dict[str, object], dict[str, object]]] = []
    for i in range(N_DEVICES):
        if rng.random() < 0.9:
            kind = rng.randrange(3)
            attributes: dict[str, object] = {
                "productName": PRODUCTS[kind], "index": i % 8, "type": rng.choice(["gpu", "mig"]),
                "uuid": f"GPU-{i:08x}-4a1b-9c2d", "driverVersion": parse_semver(DRIVERS[kind]),
                "cudaComputeCapability": parse_semver("9.0.0"), "architecture": "Hopper",
                "brand": "Nvidia", "cudaDriverVersion": parse_semver("12.4.0"),
                "addressingMode": "None", "migCapable": kind == 0,
                "resource.kubernetes.io/pcieRoot": f"pci0000:{i % 4:02x}",
            }
            capacity: dict[str, object] = {"memory": parse_quantity(MEMORY[kind])}
            devices.append(("gpu.nvidia.com", attributes, capacity))
        else:
            devices.append(("nic.example.com", {"model": "cx7", "speed": 400}, {}))
    return devices


def _api_attribute(value: object) -> DeviceAttribute:
    if isinstance(value, Semver):
        return DeviceAttribute(version=str(value))
    if isinstance(value, bool):
        return DeviceAttribute(bool_=value)
    if isinstance(value, int):
        return DeviceAttribute(int_=value)
    return DeviceAttribute(string=str(value))


def fast_forms(raw: list[tuple[str, dict[str, object], dict[str, object]]],
               prepared: list[DeviceInput]) -> None:
    """Per-device cost of each form: fast predicate, CEL warm, CEL cold (input built)."""
    devices = [(driver, Device(name=f"d{i}", attributes={
        n: _api_attribute(v) for n, v in attrs.items()}, capacity={
        n: DeviceCapacity(value=q) for n, q in caps.items()}))  # type: ignore[arg-type]
        for i, (driver, attrs, caps) in enumerate(raw)]
    assert all(qualifies(driver, device) for driver, device in devices)
    print(f"{'fast path, per device':<22} {'fast':>8} {'CEL warm':>9} {'CEL cold':>9}"
          "   decided by the fast path")
    for name, expression in FAST_FORMS.items():
        selector = compile_selector(expression)
        fast = selector.fast_predicate()
        assert fast is not None, name
        decided = sum(fast(driver, device) is not None for driver, device in devices)
        timings = []
        for run in ("fast", "warm", "cold"):
            best = float("inf")
            for _ in range(ROUNDS):
                start = time.perf_counter()
                if run == "fast":
                    for driver, device in devices:
                        fast(driver, device)
                else:
                    for (driver, attrs, caps), ready in zip(raw, prepared, strict=True):
                        if run == "cold":
                            ready = device_input(driver, attrs, caps)  # type: ignore[arg-type]
                        with contextlib.suppress(CelRuntimeError):
                            selector.evaluate(ready)
                best = min(best, time.perf_counter() - start)
            timings.append(best / N_DEVICES * 1e6)
        print(f"{name:<22} {timings[0]:>6.2f}us {timings[1]:>7.2f}us {timings[2]:>7.2f}us"
              f"   {decided:,}/{N_DEVICES:,} ({timings[1] / timings[0]:.0f}x warm, "
              f"{timings[2] / timings[0]:.0f}x cold)")


def main() -> None:
    raw = make_devices(random.Random(42))
    start = time.perf_counter()
    prepared: list[DeviceInput] = [
        device_input(driver, attrs, caps)  # type: ignore[arg-type]
        for driver, attrs, caps in raw
    ]
    prep = time.perf_counter() - start
    print(f"device_input: {prep / N_DEVICES * 1e6:.1f} us/device "
          f"({N_DEVICES} devices in {prep * 1e3:.0f} ms)")
    for name, expression in SELECTORS.items():
        selector = compile_selector(expression)
        best = float("inf")
        counts = {"true": 0, "false": 0, "error": 0}
        for _ in range(ROUNDS):
            counts = {"true": 0, "false": 0, "error": 0}
            start = time.perf_counter()
            for device in prepared:
                try:
                    counts["true" if selector.evaluate(device) else "false"] += 1
                except CelRuntimeError:
                    counts["error"] += 1
            best = min(best, time.perf_counter() - start)
        print(f"{name:<20} {N_DEVICES / best:>10,.0f} evaluations/s   "
              f"T {counts['true']} F {counts['false']} E {counts['error']}   "
              f"estimated cost {selector.estimated_cost}, bound {selector.runtime_bound}")
    fast_forms(raw, prepared)
    selector = compile_selector(PER_DEVICE_BOUND)
    start = time.perf_counter()
    for device in prepared[:PER_DEVICE_SAMPLE]:
        with contextlib.suppress(CelRuntimeError):  # the NICs have no productName
            selector.evaluate(device)
    elapsed = time.perf_counter() - start
    print(f"{'per-device bound':<20} {PER_DEVICE_SAMPLE / elapsed:>10,.0f} evaluations/s   "
          f"(first {PER_DEVICE_SAMPLE} devices, 8k-element lists; declared bound "
          f"{selector.runtime_bound})")
    start = time.perf_counter()
    try:
        compile_selector(LIST_DOUBLING).evaluate(prepared[0])
    except CelRuntimeError as err:
        print(f"list doubling (25 levels): refused in {(time.perf_counter() - start) * 1e3:.1f} ms"
              f" ({err})")


if __name__ == "__main__":
    main()
