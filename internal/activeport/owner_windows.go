package activeport

// CheckOwner would check that port is held by the Chrome of profile dir.
// Windows keeps no pid in the profile (its lock is a plain file), so it
// checks nothing there: a stale DevToolsActivePort whose port another
// program took is caught on Linux alone.
func CheckOwner(dir string, port int) error { return nil }
