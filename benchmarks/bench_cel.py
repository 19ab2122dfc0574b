"""CEL selector benchmark: evaluations per second over 10,000 synthetic devices.

Devices: 90 % ``gpu.nvidia.com`` GPUs (12 attributes incl. two versions and a
``resource.kubernetes.io/pcieRoot`` attribute, one ``memory`` capacity), 10 %
``nic.example.com`` NICs without the GPU domain (these make the quantity and
semver selectors fail at runtime, as they do upstream).

Prints device-preparation time and, per selector, evaluations/s plus the
true/false/error counts, upstream's estimated cost and our runtime bound.
Then the hostile side: how long refusing the issue's list-doubling selector
takes, and the throughput of a selector whose bound must be redone per device
(over the limit for the largest valid device, not for these). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import contextlib
import random
import time

from dralab.api.quantity import parse_quantity
from dralab.api.semver import parse_semver
from dralab.cel import CelRuntimeError, DeviceInput, compile_selector, device_input

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
