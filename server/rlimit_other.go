//go:build !unix

package server

func defaultMaxConns() int { return 256 }
