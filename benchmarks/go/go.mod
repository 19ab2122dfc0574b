// The side-by-side harness (main.go, dralab's own code). It requires upstream's Go DRA
// allocator as an ordinary module; with network access build it with
//     go mod tidy && go build -o draharness .
// Nothing of upstream is vendored or built into this repository.
module github.com/dralab/dralab/benchmarks/go

go 1.25

require (
	k8s.io/api v0.36.2
	k8s.io/apimachinery v0.36.2
	k8s.io/dynamic-resource-allocation v0.36.2
)
