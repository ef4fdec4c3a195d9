package extcdp

import "time"

// SetBigReadTimeout shortens how long a large message may take to arrive,
// for tests; it returns a function that restores it.
func SetBigReadTimeout(d time.Duration) func() {
	old := bigReadTimeout
	bigReadTimeout = d
	return func() { bigReadTimeout = old }
}
