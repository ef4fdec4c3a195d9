package livetabcdp

import (
	"crypto/sha256"
	"encoding/base64"

	"github.com/chromedp/cdproto/cdp"
)

// A transfer moves one file's bytes between the calling program and a page
// without making them a CDP or JavaScript string: the relay, on the
// browser's machine, holds them in a temporary file and serves them on a
// loopback HTTP address to the extension's transfer page (transfer.html,
// framed into the tab by the caller's in-page script), which hands the page
// a Blob by postMessage, or posts the page's Blob there. The caller streams
// the bytes to the relay (Livetab.writeTransfer) or reads them back
// (Livetab.readTransfer) over its CDP connection, which between two Go
// programs costs far less than Chrome's own conversion of CDP strings; a
// program on the browser's machine reads a page's bytes from the relay's
// file instead (Livetab.transferFile).
//
// The frame's URL holds a single-use token: the relay serves one request
// for it, to the transfer page only, before it expires. Only the client
// that opened a transfer may write, read or close it, and a client's
// transfers end when it disconnects.

// Transfer directions.
const (
	TransferToPage   = "toPage"   // upload: the program's bytes into the page
	TransferFromPage = "fromPage" // capture: a page's Blob out to the program
)

// OpenTransferParams are the params of Livetab.openTransfer.
type OpenTransferParams struct {
	// Direction is TransferToPage or TransferFromPage.
	Direction string `json:"direction"`
	// Size is the file's size in bytes: what the program will write, or
	// the most the page may post.
	Size int64 `json:"size"`
}

// OpenTransferResult is the result of Livetab.openTransfer.
type OpenTransferResult struct {
	// Transfer names the transfer in the other Transfer methods.
	Transfer string `json:"transfer"`
	// FrameURL is the URL of the extension's transfer page for this
	// transfer: frame it into the page.
	FrameURL string `json:"frameUrl"`
	// Expires is how many milliseconds the frame has to fetch or post
	// the bytes once they are written.
	Expires int64 `json:"expires"`
}

// OpenTransfer opens a transfer.
var OpenTransfer = cdp.Command[OpenTransferParams, OpenTransferResult]{Method: CommandOpenTransfer}

// WriteTransferParams are the params of Livetab.writeTransfer.
type WriteTransferParams struct {
	Transfer string `json:"transfer"`
	// Offset is where Data goes: the bytes written so far.
	Offset int64 `json:"offset"`
	// Data is the next bytes, in base64.
	Data []byte `json:"data"`
}

// WriteTransfer appends bytes to a TransferToPage transfer. The page's
// frame may fetch while they arrive.
var WriteTransfer = cdp.Command[WriteTransferParams, cdp.Empty]{Method: CommandWriteTransfer}

// ReadTransferParams are the params of Livetab.readTransfer.
type ReadTransferParams struct {
	Transfer string `json:"transfer"`
	Offset   int64  `json:"offset"`
	// Size is the most bytes to return (at most 2 MiB; fewer come back
	// near the end, or when asked for more).
	Size int64 `json:"size"`
}

// ReadTransferResult is the result of Livetab.readTransfer.
type ReadTransferResult struct {
	// Data are the bytes from Offset, in base64; empty at the end.
	Data []byte `json:"data"`
	// EOF is whether Data ends the file.
	EOF bool `json:"eof"`
	// Total is the size of the file the page posted.
	Total int64 `json:"total"`
}

// ReadTransfer reads the bytes a page posted to a TransferFromPage
// transfer; it fails until the page's post is complete.
var ReadTransfer = cdp.Command[ReadTransferParams, ReadTransferResult]{Method: CommandReadTransfer}

// CloseTransferParams are the params of Livetab.closeTransfer.
type CloseTransferParams struct {
	Transfer string `json:"transfer"`
}

// CloseTransfer ends a transfer: its token is spent, a fetch or post in
// progress is cut, and its bytes are removed.
var CloseTransfer = cdp.Command[CloseTransferParams, cdp.Empty]{Method: CommandCloseTransfer}

// TransferFileParams are the params of Livetab.transferFile.
type TransferFileParams struct {
	Transfer string `json:"transfer"`
	// Offset is how many bytes the program has: the answer waits until
	// the page posted more than that, or all of them.
	Offset int64 `json:"offset"`
}

// TransferFileResult is the result of Livetab.transferFile.
type TransferFileResult struct {
	// Path is the file on the browser's machine that holds the bytes the
	// page posts, in a directory only the browser's user may open; its
	// name is TransferFileName(transfer).
	Path string `json:"path"`
	// Written is how many bytes from the start of the file are there.
	Written int64 `json:"written"`
	// Total is the size of the file the page posts.
	Total int64 `json:"total"`
}

// TransferFile answers, to the program that opened a TransferFromPage
// transfer only, the path of the file the relay keeps its bytes in and how
// many have arrived, once more than Offset have. A program on the
// browser's machine reads the file itself instead of Livetab.readTransfer,
// sparing the base64 of every byte; one that cannot open it (on another
// machine, behind livetab serve) reads as before. The file goes when the
// transfer is closed: a program that opened it keeps reading what it
// opened.
var TransferFile = cdp.Command[TransferFileParams, TransferFileResult]{Method: CommandTransferFile}

// TransferFileName is the name of the file of a transfer from the page:
// derived from the transfer's token, so that the program can tell the file
// is the one of its transfer, without the name giving the token away.
func TransferFileName(transfer string) string {
	h := sha256.Sum256([]byte("livetab transfer file\x00" + transfer))
	return "livetab-transfer-" + base64.RawURLEncoding.EncodeToString(h[:])
}
