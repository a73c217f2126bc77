// Package darwin is the Core ML backend of the coreml seam: NewCoreML
// loads compiled models and runs them through darwinkit (the *_darwin.go
// files, built on macOS with cgo), and CompileModel compiles a .mlpackage
// once into the .mlmodelc beside it. The helpers that do not need a Mac —
// MLMultiArray dtypes and strides, the checks made before Core ML is
// handed a pointer, waiting for a function listing — are in files built
// everywhere and tested on Linux; the darwin files are type-checked there
// as darwin/arm64 (typecheck_test.go, through internal/crosscheck).
//
// Only cli imports it: everything else sees a runtime through coreml's
// interfaces, so no other package links darwinkit through here.
package darwin
