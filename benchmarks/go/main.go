// Command draharness drives the upstream Go DRA allocator
// (k8s.io/dynamic-resource-allocation/structured v0.36.2, public API only)
// through the shapes and the procedure of dralab's benchmarks/bench_allocator.py,
// so that both can be run side by side (bench_allocator.py --go PATH).
//
//	draharness [-quick] [-only shapes|full|fill|partitionable|backtracking] [-clock cpu|wall]
//	draharness -only hetero|hetero-dense -input FILE
//
// Every figure is one pod's DRA work as kube-scheduler does it: NewAllocator
// over all slices, then Allocate node by node, round-robin from where the
// previous pod stopped, until kube-scheduler's number of feasible nodes is
// found. Output: one line per figure ("<label>  <value> us|pods/s") and
// "check <label> <digest>" lines: a SHA-256 over the first pod's calls
// (node|outcome|request=pool/device,...|search steps) in the same text as the
// Python side, so equal digests mean the same devices and search-step counts.
//
// The heterogeneous segments (issue 34) read their objects from a JSON file
// that bench_allocator.py writes (--write-hetero DIR, or --go does it): classes,
// nodes, slices, the devices allocated before the first pod, and the pods with
// their claims and the slice changes before each (see benchmarks/hetero_fleet.py).
//
// Feature set: dralab's defaults (AllocatorFeatures()): AdminAccess,
// PrioritizedList, PartitionableDevices, DeviceTaints, DeviceBindingAndStatus,
// ConsumableCapacity on; ListTypeAttributes off. With v0.36.2 this selects the
// "incubating" implementation, as in a 1.36 kube-scheduler with default gates.
//
// Our own code (dralab, Apache-2.0); it only imports upstream's packages.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const (
	driver   = "test-driver.cdi.k8s.io"
	class    = "test-class"
	numa     = "dra.example.com/numa"
	selector = `device.attributes["test-driver.cdi.k8s.io"].driverVersion.major() >= 1 && ` +
		`device.capacity["test-driver.cdi.k8s.io"].memory.isGreaterThan(quantity("1Mi"))`
)

var features = structured.Features{
	AdminAccess:            true,
	ConsumableCapacity:     true,
	DeviceBindingAndStatus: true,
	DeviceTaints:           true,
	PartitionableDevices:   true,
	PrioritizedList:        true,
}

// kube-scheduler's DRA plugin uses a compile cache of 10 entries.
var celCache = cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})

var ctx = context.Background()

// ---- object builders (mirror bench_allocator.py) ---------------------------

func celSel(expr string) resourceapi.DeviceSelector {
	return resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}
}

func deviceClass(name, drv string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{
			celSel(fmt.Sprintf("device.driver == %q", drv))}},
	}
}

type classList map[string]*resourceapi.DeviceClass

func (c classList) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(c))
	for _, v := range c {
		out = append(out, v)
	}
	return out, nil
}

func (c classList) Get(name string) (*resourceapi.DeviceClass, error) {
	if v, ok := c[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("deviceclass %q not found", name)
}

func mkClasses(cs ...*resourceapi.DeviceClass) classList {
	out := classList{}
	for _, c := range cs {
		out[c.Name] = c
	}
	return out
}

func strp(s string) *string { return &s }
func i64p(i int64) *int64   { return &i }
func boolp(b bool) *bool    { return &b }

func nodeSlice(node string, count int) *resourceapi.ResourceSlice {
	devices := make([]resourceapi.Device, count)
	for i := range devices {
		devices[i] = resourceapi.Device{
			Name: fmt.Sprintf("instance-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"model":         {StringValue: strp("A100")},
				"family":        {StringValue: strp("GPU")},
				"driverVersion": {VersionValue: strp("1.2.3")},
				numa:            {IntValue: i64p(int64(i))},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: resource.MustParse("1Gi")},
			},
		}
	}
	return &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   driver,
			NodeName: strp(node),
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
}

func request(name, cls string, count int64, selectors ...string) resourceapi.DeviceRequest {
	sels := make([]resourceapi.DeviceSelector, 0, len(selectors))
	for _, s := range selectors {
		sels = append(sels, celSel(s))
	}
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: cls,
		AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
		Count:           count,
		Selectors:       sels,
	}}
}

func makeClaim(name string, reqs []resourceapi.DeviceRequest, cons ...resourceapi.DeviceConstraint) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: types.UID(name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: reqs, Constraints: cons}},
	}
}

func matchAttr(name string) resourceapi.DeviceConstraint {
	fq := resourceapi.FullyQualifiedName(name)
	return resourceapi.DeviceConstraint{MatchAttribute: &fq}
}

var shapeNames = []string{"one-device", "selector", "match-attribute", "first-available"}

func makeShape(shape, name string) *resourceapi.ResourceClaim {
	switch shape {
	case "one-device":
		return makeClaim(name, []resourceapi.DeviceRequest{request("req-0", class, 1)})
	case "selector":
		return makeClaim(name, []resourceapi.DeviceRequest{request("req-0", class, 1, selector)})
	case "match-attribute":
		return makeClaim(name, []resourceapi.DeviceRequest{request("req-0", class, 1), request("req-1", class, 1)},
			matchAttr(driver+"/model"))
	case "first-available":
		return makeClaim(name, []resourceapi.DeviceRequest{{Name: "req-0", FirstAvailable: []resourceapi.DeviceSubRequest{
			{Name: "none", DeviceClassName: "empty-class", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
			{Name: "any", DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		}}})
	}
	panic(shape)
}

// ---- engine: allocator + allocated state ------------------------------------

type engine struct {
	slices  []*resourceapi.ResourceSlice
	classes classList
	state   structured.AllocatedState
	alloc   structured.Allocator
	nodes   map[string]*v1.Node
	labels  map[string]map[string]string // labels per node name (absent: none)
	// where the next pod's node search starts (kube-scheduler's nextStartNodeIndex)
	position int
}

func newEngine(slices []*resourceapi.ResourceSlice, classes classList) *engine {
	e := &engine{slices: slices, classes: classes, nodes: map[string]*v1.Node{},
		state: structured.AllocatedState{
			AllocatedDevices:         sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
			AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
		}}
	e.rebuild()
	return e
}

// rebuild runs NewAllocator over the current state (what kube-scheduler does once per pod).
func (e *engine) rebuild() {
	a, err := structured.NewAllocator(ctx, features, e.state, e.classes, e.slices, celCache)
	if err != nil {
		panic(err)
	}
	e.alloc = a
}

func (e *engine) node(name string) *v1.Node {
	n := e.nodes[name]
	if n == nil {
		n = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: e.labels[name]}}
		e.nodes[name] = n
	}
	return n
}

// outcome: nil results + nil error = unschedulable; an error wrapping
// ErrFailedAllocationOnNode is unschedulable too (kube-scheduler's reading).
func (e *engine) allocate(c *resourceapi.ResourceClaim, node string) ([]resourceapi.AllocationResult, error) {
	return e.allocateAll([]*resourceapi.ResourceClaim{c}, node)
}

// allocateAll: a pod's claims together (one result per claim, in order).
func (e *engine) allocateAll(cs []*resourceapi.ResourceClaim, node string) ([]resourceapi.AllocationResult, error) {
	res, err := e.alloc.Allocate(ctx, e.node(node), cs)
	if err != nil && errors.Is(err, structured.ErrFailedAllocationOnNode) {
		return nil, nil
	}
	return res, err
}

// add commits an allocation into the state in place; the allocator holds the
// same set, so later calls see it (the state has no counter pools in the
// shapes where this is used; counter shapes rebuild instead).
func (e *engine) add(res []resourceapi.AllocationResult) {
	for _, r := range res {
		for _, d := range r.Devices.Results {
			e.state.AllocatedDevices.Insert(structured.MakeDeviceID(d.Driver, d.Pool, d.Device))
		}
	}
}

// steps reads the allocator's allocateOne counter (the same unit as dralab's
// search steps) through the exported GetStats method of the implementation.
func steps(a structured.Allocator) int64 {
	m := reflect.ValueOf(a).MethodByName("GetStats")
	if !m.IsValid() {
		return -1
	}
	return m.Call(nil)[0].FieldByName("NumAllocateOneInvocations").Int()
}

func must(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf(format, args...))
	}
}

// ---- timing (mirror bench_allocator.timed / report) -------------------------

// useCPU selects the clock: wall (time.Now, like Python's perf_counter) or the
// process CPU clock (CLOCK_PROCESS_CPUTIME_ID, like Python's process_time;
// with GOMAXPROCS=1 it covers the Go code and its garbage collector, and it
// does not count time spent waiting for a CPU on a busy host).
var useCPU = true

var wallStart = time.Now()

func now() float64 {
	if !useCPU {
		return time.Since(wallStart).Seconds()
	}
	var ts syscall.Timespec
	const clockProcessCPUTimeID = 2
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID,
		uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}

// timed: best-of-3 mean seconds per call.
func timed(fn func(), repeat int) float64 {
	best := 1e300
	for r := 0; r < 3; r++ {
		start := now()
		for i := 0; i < repeat; i++ {
			fn()
		}
		if d := (now() - start) / float64(repeat); d < best {
			best = d
		}
	}
	return best
}

func report(label string, value float64, unit string) {
	fmt.Printf("%-58s %12.1f %s\n", label, value, unit)
}

func clusterSetup(nodes, devices int) ([]*resourceapi.ResourceSlice, classList, []string) {
	names := make([]string, nodes)
	slices := make([]*resourceapi.ResourceSlice, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
		slices[i] = nodeSlice(names[i], devices)
	}
	return slices, mkClasses(deviceClass(class, driver), deviceClass("empty-class", "no-such-driver")), names
}

func fill(e *engine, nodes []string, perNode int, fraction float64) {
	for _, node := range nodes {
		for j := 0; j < int(float64(perNode)*fraction); j++ {
			res, err := e.allocate(makeShape("one-device", fmt.Sprintf("fill-%s-%d", node, j)), node)
			must(err == nil && res != nil, "fill %s: %v %v", node, res, err)
			e.add(res)
		}
	}
}

// ---- kube-scheduler's procedure ----------------------------------------------

// feasibleNodesToFind is kube-scheduler's numFeasibleNodesToFind with the
// default (adaptive) percentage: 230 for 500 nodes, all nodes below 100.
func feasibleNodesToFind(n int) int {
	if n < 100 {
		return n
	}
	percentage := 50 - n/125
	if percentage < 5 { // minFeasibleNodesPercentageToFind
		percentage = 5
	}
	k := n * percentage / 100
	if k < 100 {
		k = 100
	}
	return k
}

type call struct {
	node  string
	res   []resourceapi.AllocationResult
	err   error
	steps int64
}

// schedulePod: NewAllocator, then nodes round-robin from e.position until
// enough are feasible. Returns the calls (if record) and the first fit.
func schedulePod(e *engine, names []string, c *resourceapi.ResourceClaim, record bool) ([]call, *call) {
	return schedulePodClaims(e, names, []*resourceapi.ResourceClaim{c}, record)
}

// schedulePodClaims: schedulePod for a pod with any number of claims.
func schedulePodClaims(e *engine, names []string, cs []*resourceapi.ResourceClaim, record bool) ([]call, *call) {
	e.rebuild()
	target := feasibleNodesToFind(len(names))
	found := 0
	var calls []call
	var first *call
	for k := 0; k < len(names) && found < target; k++ {
		n := names[e.position]
		e.position = (e.position + 1) % len(names)
		before := steps(e.alloc)
		res, err := e.allocateAll(cs, n)
		if err != nil {
			panic(fmt.Sprintf("%s on %s: %v", cs[0].Name, n, err))
		}
		cl := call{node: n, res: res, err: err, steps: steps(e.alloc) - before}
		if record {
			calls = append(calls, cl)
		}
		if res != nil {
			found++
			if first == nil {
				first = &cl
			}
		}
	}
	return calls, first
}

func checkDigest(calls []call) string {
	return digest(checkText(calls))
}

// checkText: the hashed text; an allocation lists the devices of all the
// pod's claims in order (one claim: as before).
func checkText(calls []call) string {
	var b strings.Builder
	for _, c := range calls {
		switch {
		case c.err != nil:
			fmt.Fprintf(&b, "%s|error||%d\n", c.node, c.steps)
		case c.res == nil:
			fmt.Fprintf(&b, "%s|unschedulable||%d\n", c.node, c.steps)
		default:
			var ds []string
			for _, claimRes := range c.res {
				for _, r := range claimRes.Devices.Results {
					ds = append(ds, r.Request+"="+r.Pool+"/"+r.Device)
				}
			}
			fmt.Fprintf(&b, "%s|allocated|%s|%d\n", c.node, strings.Join(ds, ","), c.steps)
		}
	}
	return b.String()
}

func digest(text string) string {
	if os.Getenv("CHECK_TEXT") != "" { // to find where the two sides differ
		fmt.Fprint(os.Stderr, text)
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])[:16]
}

// timedPods: best-of-3 mean seconds per pod.
func timedPods(fn func(), pods int) float64 {
	return timed(fn, pods)
}

// timedOnce: mean seconds per pod over one run of pods.
func timedOnce(fn func(), pods int) float64 {
	start := now()
	for i := 0; i < pods; i++ {
		fn()
	}
	return (now() - start) / float64(pods)
}

// ---- the segments --------------------------------------------------------------

func benchShapes(quick bool) {
	pods := 20 // enough that a full collection in one round moves the mean little
	if quick {
		pods = 2
	}
	slices, classes, names := clusterSetup(500, 10)
	for _, ft := range []struct {
		fraction float64
		tag      string
	}{{0, "empty"}, {0.5, "half full"}} {
		e := newEngine(slices, classes)
		fill(e, names, 10, ft.fraction)
		for _, shape := range shapeNames {
			label := fmt.Sprintf("pod %s (%s)", shape, ft.tag)
			e.position = 0
			calls, _ := schedulePod(e, names, makeShape(shape, "check-"+shape), true)
			fmt.Printf("check %s %s\n", label, checkDigest(calls))
			e.position = 0
			it := 0
			one := func() {
				schedulePod(e, names, makeShape(shape, fmt.Sprintf("%s-%d", shape, it)), false)
				it++
			}
			runtime.GC()
			report(label, timedPods(one, pods)*1e6, "us")
		}
	}
}

func benchFull(quick bool) {
	nodes := 500
	pods := 20
	if quick {
		nodes, pods = 100, 3
	}
	slices, classes, names := clusterSetup(nodes, 10)
	e := newEngine(slices, classes)
	fill(e, names, 10, 1.0)
	label := fmt.Sprintf("pod, all %d nodes full", nodes)
	calls, first := schedulePod(e, names, makeShape("one-device", "check-full"), true)
	must(first == nil, "full: a node fits")
	fmt.Printf("check %s %s\n", label, checkDigest(calls))
	it := 0
	one := func() {
		schedulePod(e, names, makeShape("one-device", fmt.Sprintf("full-%d", it)), false)
		it++
	}
	runtime.GC()
	report(label, timedPods(one, pods)*1e6, "us")
}

func benchFill(quick bool) {
	nodes := 500
	if quick {
		nodes = 50
	}
	slices, classes, names := clusterSetup(nodes, 10)
	e := newEngine(slices, classes)
	pods := nodes * 10
	claims := make([]*resourceapi.ResourceClaim, pods)
	for i := range claims {
		claims[i] = makeShape("one-device", fmt.Sprintf("pod-%d", i))
	}
	var placed []call
	runtime.GC()
	start := now()
	half := start
	for i, c := range claims {
		if i == pods/2 {
			half = now()
		}
		_, first := schedulePod(e, names, c, false)
		must(first != nil, "cluster full too early")
		e.add(first.res)
		// the check names the pool (= node) that got the device
		placed = append(placed, call{node: first.res[0].Devices.Results[0].Pool, res: first.res, steps: first.steps})
	}
	end := now()
	label := fmt.Sprintf("fill %d pods on %d nodes", pods, nodes)
	fmt.Printf("check %s %s\n", label, checkDigest(placed))
	report(label+", all pods", float64(pods)/(end-start), "pods/s")
	report(label+", second half", float64(pods-pods/2)/(end-half), "pods/s")
}

// benchFirstCallAndPod: per pod, the first Allocate with NewAllocator, and the whole pod.
func benchFirstCallAndPod(e *engine, names []string, label string, mk func(string) *resourceapi.ResourceClaim, pods int, bestOf3 bool) {
	e.position = 0
	calls, _ := schedulePod(e, names, mk("check"), true)
	fmt.Printf("check %s %s\n", label, checkDigest(calls))
	runtime.GC()
	best := 1e300
	for k := 0; k < 3; k++ { // best of 3 means over pods first calls
		start := now()
		for j := 0; j < pods; j++ {
			e.rebuild()
			res, err := e.allocate(mk(fmt.Sprintf("first-%d-%d", k, j)), names[0])
			must(err == nil && res != nil, "%s first call: %v %v", label, res, err)
		}
		if d := (now() - start) / float64(pods); d < best {
			best = d
		}
	}
	report(label+", first Allocate with a new allocator", best*1e6, "us")
	e.position = 0
	it := 0
	one := func() {
		schedulePod(e, names, mk(fmt.Sprintf("pod-%d", it)), false)
		it++
	}
	t := timedOnce
	if bestOf3 {
		t = timedPods
	}
	report(fmt.Sprintf("%s, pod (%d nodes)", label, len(names)), t(one, pods)*1e6, "us")
}

var draLabels = map[string]string{"node-with-dra": "true"}

func draSelector() *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "node-with-dra", Operator: v1.NodeSelectorOpIn, Values: []string{"true"}}}}}}
}

// partitionableSlices: upstream's resourceslice-partitionable-{countersets,devices}.yaml.
func partitionableSlices(pools int) []*resourceapi.ResourceSlice {
	one := resource.MustParse("1")
	var out []*resourceapi.ResourceSlice
	for i := 0; i < pools; i++ {
		name := fmt.Sprintf("resourceslice-%d", i)
		dev := func(dn string, pre bool, capacity string, consumes ...string) resourceapi.Device {
			cs := map[string]resourceapi.Counter{}
			for _, c := range consumes {
				cs[c] = resourceapi.Counter{Value: one}
			}
			return resourceapi.Device{
				Name: dn,
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"preallocate":           {BoolValue: boolp(pre)},
					"dra.example.com/slice": {IntValue: i64p(int64(i))},
				},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"counters": {Value: resource.MustParse(capacity)},
				},
				ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: "counter-set", Counters: cs}},
			}
		}
		spec := func() resourceapi.ResourceSliceSpec {
			return resourceapi.ResourceSliceSpec{Driver: driver, NodeSelector: draSelector(),
				Pool: resourceapi.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 2}}
		}
		cs := spec()
		cs.SharedCounters = []resourceapi.CounterSet{{Name: "counter-set", Counters: map[string]resourceapi.Counter{
			"counter1": {Value: one}, "counter2": {Value: one}, "counter3": {Value: one}, "counter4": {Value: one}}}}
		ds := spec()
		ds.Devices = []resourceapi.Device{
			dev("device-2-counters-1", true, "2", "counter1", "counter2"),
			dev("device-2-counters-2", false, "2", "counter3", "counter4"),
			dev("device-1-counter-1", false, "1", "counter1"),
			dev("device-1-counter-2", false, "1", "counter2"),
			dev("device-1-counter-3", false, "1", "counter3"),
			dev("device-1-counter-4", false, "1", "counter4"),
		}
		out = append(out,
			&resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("resourceslice-countersets-%d", i)}, Spec: cs},
			&resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("resourceslice-devices-%d", i)}, Spec: ds})
	}
	return out
}

func partitionableClaim(name string) *resourceapi.ResourceClaim {
	fq := resourceapi.FullyQualifiedName("dra.example.com/slice")
	return makeClaim(name, []resourceapi.DeviceRequest{request("req-0", class, 2)},
		resourceapi.DeviceConstraint{Requests: []string{"req-0"}, MatchAttribute: &fq})
}

func benchPartitionable(quick bool) {
	pools, nodes, pods := 2000, 100, 1
	if quick {
		pools, nodes, pods = 200, 10, 1
	}
	e := newEngine(partitionableSlices(pools), mkClasses(deviceClass(class, driver)))
	e.labels = map[string]map[string]string{}
	names := make([]string, nodes)
	for k := range names {
		names[k] = fmt.Sprintf("scheduler-perf-dra-%d", k)
		e.labels[names[k]] = draLabels
	}
	// upstream allocates claims with a selector (counters >= 2 && preallocate)
	// first: each takes device-2-counters-1 of one pool.
	for i := 0; i < pools; i++ {
		e.state.AllocatedDevices.Insert(structured.MakeDeviceID(driver, fmt.Sprintf("resourceslice-%d", i), "device-2-counters-1"))
	}
	// One pod tries 100 nodes of 12,000 devices each: seconds per pod on both sides.
	benchFirstCallAndPod(e, names, fmt.Sprintf("partitionable %d pools", pools), partitionableClaim, pods, false)
}

// backtrackingSlices: upstream's resourceslice-partitionable-backtracking-{countersets,devices}.yaml, index 0.
func backtrackingSlices() []*resourceapi.ResourceSlice {
	pool := resourceapi.ResourcePool{Name: "resourceslice-0", Generation: 1, ResourceSliceCount: 2}
	cpu := map[string]resourceapi.Counter{}
	var devices []resourceapi.Device
	for k := 1; k <= 8; k++ {
		cpu[fmt.Sprintf("cpu%d", k)] = resourceapi.Counter{Value: resource.MustParse("1")}
		mem := "10Gi"
		if k == 1 {
			mem = "20Gi"
		}
		devices = append(devices, resourceapi.Device{
			Name: fmt.Sprintf("device-%d", k),
			ConsumesCounters: []resourceapi.DeviceCounterConsumption{
				{CounterSet: "counter-set-for-cpu", Counters: map[string]resourceapi.Counter{
					fmt.Sprintf("cpu%d", k): {Value: resource.MustParse("1")}}},
				{CounterSet: "counter-set-for-mem", Counters: map[string]resourceapi.Counter{
					"mem": {Value: resource.MustParse(mem)}}},
			},
		})
	}
	return []*resourceapi.ResourceSlice{
		{ObjectMeta: metav1.ObjectMeta{Name: "resourceslice-countersets-0"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: driver, NodeName: strp("scheduler-perf-dra-0"), Pool: pool,
			SharedCounters: []resourceapi.CounterSet{
				{Name: "counter-set-for-cpu", Counters: cpu},
				{Name: "counter-set-for-mem", Counters: map[string]resourceapi.Counter{"mem": {Value: resource.MustParse("70Gi")}}},
			}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "resourceslice-devices-0"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: driver, NodeSelector: draSelector(), Pool: pool, Devices: devices}},
	}
}

func benchBacktracking(quick bool) {
	pods := 200
	if quick {
		pods = 20
	}
	e := newEngine(backtrackingSlices(), mkClasses(deviceClass(class, driver)))
	e.labels = map[string]map[string]string{"scheduler-perf-dra-0": draLabels}
	names := []string{"scheduler-perf-dra-0", "scheduler-perf-0"}
	benchFirstCallAndPod(e, names, "backtracking",
		func(n string) *resourceapi.ResourceClaim {
			return makeClaim(n, []resourceapi.DeviceRequest{request("req-0", class, 7)})
		}, pods, true)
}

// ---- the heterogeneous fleet (issue 34), read from bench_allocator.py's JSON -----

type heteroPod struct {
	Shape        string                       `json:"shape"`
	Claims       []*resourceapi.ResourceClaim `json:"claims"`
	RemoveSlices []string                     `json:"removeSlices"`
	AddSlices    []*resourceapi.ResourceSlice `json:"addSlices"`
}

type heteroNode struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type heteroDevice struct {
	Driver string `json:"driver"`
	Pool   string `json:"pool"`
	Device string `json:"device"`
}

type heteroInput struct {
	Format    string                       `json:"format"`
	Fleet     string                       `json:"fleet"`
	Classes   []*resourceapi.DeviceClass   `json:"classes"`
	Nodes     []heteroNode                 `json:"nodes"`
	Slices    []*resourceapi.ResourceSlice `json:"slices"`
	Allocated []heteroDevice               `json:"allocated"`
	Pods      []heteroPod                  `json:"pods"`
}

// percentile: nearest rank (bench_allocator.percentile).
func percentile(values []float64, q int) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	rank := (len(sorted)*q + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// benchHetero: every pod cold (NewAllocator over the slices of the moment),
// timed alone; per claim shape the median and p90 per pod. Nothing is committed.
func benchHetero(path string) {
	must(path != "", "the hetero segments need -input FILE (bench_allocator.py --write-hetero DIR)")
	raw, err := os.ReadFile(path)
	must(err == nil, "%v", err)
	var in heteroInput
	err = json.Unmarshal(raw, &in)
	must(err == nil, "%s: %v", path, err)
	must(in.Format == "dralab-allocator-bench-v1", "%s: not a dralab-allocator-bench-v1 document", path)
	e := newEngine(append([]*resourceapi.ResourceSlice(nil), in.Slices...), mkClasses(in.Classes...))
	e.labels = map[string]map[string]string{}
	names := make([]string, len(in.Nodes))
	for i, n := range in.Nodes {
		names[i] = n.Name
		e.labels[n.Name] = n.Labels
	}
	for _, a := range in.Allocated {
		e.state.AllocatedDevices.Insert(structured.MakeDeviceID(a.Driver, a.Pool, a.Device))
	}
	label := fmt.Sprintf("hetero %s %d nodes", in.Fleet, len(names))
	var shapes []string // in order of first appearance, as the Python side
	seconds := map[string][]float64{}
	texts := map[string]*strings.Builder{}
	runtime.GC()
	for _, pod := range in.Pods {
		if len(pod.RemoveSlices) > 0 {
			gone := sets.New(pod.RemoveSlices...)
			var kept []*resourceapi.ResourceSlice
			for _, s := range e.slices {
				if !gone.Has(s.Name) {
					kept = append(kept, s)
				}
			}
			e.slices = kept
		}
		e.slices = append(e.slices, pod.AddSlices...)
		start := now()
		calls, _ := schedulePodClaims(e, names, pod.Claims, true)
		elapsed := now() - start
		if _, ok := texts[pod.Shape]; !ok {
			shapes = append(shapes, pod.Shape)
			texts[pod.Shape] = &strings.Builder{}
		}
		seconds[pod.Shape] = append(seconds[pod.Shape], elapsed)
		texts[pod.Shape].WriteString(checkText(calls))
	}
	var all strings.Builder
	var allSeconds []float64
	for _, shape := range shapes {
		fmt.Printf("check %s %s %s\n", label, shape, digest(texts[shape].String()))
		all.WriteString(texts[shape].String())
		allSeconds = append(allSeconds, seconds[shape]...)
	}
	sum := sha256.Sum256([]byte(all.String()))
	fmt.Printf("check %s all pods %s\n", label, hex.EncodeToString(sum[:])[:16])
	seconds["all pods"] = allSeconds
	for _, shape := range append(shapes, "all pods") {
		for _, q := range []int{50, 90} {
			report(fmt.Sprintf("%s %s p%d", label, shape, q), percentile(seconds[shape], q)*1e6, "us")
		}
	}
}

func main() {
	quick := flag.Bool("quick", false, "smaller shapes (smoke test)")
	only := flag.String("only", "", "shapes|full|fill|partitionable|backtracking|hetero|hetero-dense (default: all but hetero*)")
	input := flag.String("input", "", "the hetero segments' JSON input (bench_allocator.py --write-hetero)")
	clock := flag.String("clock", "cpu", "cpu (process CPU time) | wall")
	flag.Parse()
	useCPU = *clock == "cpu"
	fmt.Printf("%-58s %12s   (Go %s, GOMAXPROCS %d, clock %s)\n", "figure", "measured", runtime.Version(), runtime.GOMAXPROCS(0), *clock)
	benches := []struct {
		name string
		run  func(bool)
	}{{"shapes", benchShapes}, {"full", benchFull}, {"fill", benchFill},
		{"partitionable", benchPartitionable}, {"backtracking", benchBacktracking},
		{"hetero", func(bool) { benchHetero(*input) }},
		{"hetero-dense", func(bool) { benchHetero(*input) }}}
	ran := false
	for _, b := range benches {
		if (*only == "" && !strings.HasPrefix(b.name, "hetero")) || *only == b.name {
			b.run(*quick)
			ran = true
		}
	}
	must(ran, "unknown segment %q", *only)
}
