//go:build !linux

package vflow

import "errors"

// Available reports that virtual flows need Linux: BPF sk_lookup and raw
// sockets with IP_HDRINCL are Linux features.
func Available() error {
	return errors.New("vflow: virtual flows need Linux 5.9 or later (BPF sk_lookup); this build is not for Linux")
}
