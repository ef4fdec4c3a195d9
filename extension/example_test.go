package extension_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/livetab/livetab/extension"
)

// Write the extension with the bridge's URL and token, then load the
// directory in Chrome: chrome://extensions → Developer mode → Load unpacked.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "livetab-ext-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	err = extension.Write(dir, extension.Config{
		URL:   "ws://127.0.0.1:9333/extension",
		Token: "the-token-the-bridge-printed",
	})
	if err != nil {
		log.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "config.json"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("config.json", fi.Mode().Perm())
	fmt.Println("origin to accept:", extension.Origin)
	// Output:
	// config.json -rw-------
	// origin to accept: chrome-extension://eklljajjoeckbndnofgggnldegggkbdp
}
