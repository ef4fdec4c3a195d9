package main

import (
	"testing"

	"github.com/livetab/livetab/internal/testsite"
)

// TestServeClients runs unmodified Playwright and Puppeteer against
// `livetab serve`, with the URL `livetab endpoint` prints.
func TestServeClients(t *testing.T) {
	url := endpointURL(t)
	site := testsite.Start()
	defer site.Close()
	site.CheckClients(t, url)
}
