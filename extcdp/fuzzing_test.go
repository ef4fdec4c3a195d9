package extcdp_test

import "flag"

// fuzzing reports whether the test binary runs a fuzz target (go test
// -fuzz): the fuzz targets need no browser, and each fuzz worker process
// would otherwise start its own.
func fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return true
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
