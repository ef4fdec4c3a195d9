//go:build !unix

package main

// processAlive cannot tell here; the probe of the file's address decides.
func processAlive(pid int) bool { return true }
