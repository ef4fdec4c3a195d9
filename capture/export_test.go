package capture

// SetNoIORead makes captures read blobs with the JavaScript reader instead
// of IO.read, to test that fallback.
func SetNoIORead(v bool) { noIORead = v }

// SetExtensionSaveURL rewrites the URL RungSave asks the extension to
// download, so that a test sees the extension refuse one (as an extension
// from before http(s) URLs does) and the ladder fall back. nil restores.
func SetExtensionSaveURL(f func(string) string) { extensionSaveURL = f }

// SetTransferFilePath rewrites the path of the relay's file of a transfer
// from the page, so that a test sees the capture refuse one and read
// through the relay. nil restores.
func SetTransferFilePath(f func(string) string) { transferFilePath = f }

// TransferFiles counts the transfers read from the relay's file.
func TransferFiles() int64 { return transferFiles.Load() }
