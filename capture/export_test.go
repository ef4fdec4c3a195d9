package capture

// SetNoIORead makes captures read blobs with the JavaScript reader instead
// of IO.read, to test that fallback.
func SetNoIORead(v bool) { noIORead = v }
