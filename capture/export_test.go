package capture

// SetNoIORead makes captures read blobs with the JavaScript reader instead
// of IO.read, to test that fallback.
func SetNoIORead(v bool) { noIORead = v }

// SetExtensionSaveURL rewrites the URL RungSave asks the extension to
// download, so that a test sees the extension refuse one (as an extension
// from before http(s) URLs does) and the ladder fall back. nil restores.
func SetExtensionSaveURL(f func(string) string) { extensionSaveURL = f }
