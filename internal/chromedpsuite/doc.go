// Package chromedpsuite runs chromedp's own test suite against livetab; its
// only content is TestChromedpSuite. See README.md.
package chromedpsuite
