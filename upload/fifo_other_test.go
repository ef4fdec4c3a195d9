//go:build !unix

package upload_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
