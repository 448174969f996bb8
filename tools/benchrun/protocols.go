package main

// Every protocol lobbybench speaks registers itself from its own packages;
// this one import links them all.
import _ "github.com/lobbybench/lobbybench/protocols/all"
