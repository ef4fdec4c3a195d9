// A round trip that does nothing: the page answers it only after the events
// it sent before, so Go sees a navigation the last input event scheduled.
0
