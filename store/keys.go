package store

import "strings"

// Key names are built from a Family's Pattern (pattern.go); this file holds what Redis itself
// does with a key name: the Cluster slot it hashes to.

// slotCount is the number of Redis Cluster hash slots.
const slotCount = 16384

// Slot returns the Redis Cluster hash slot of key, honouring hash tags: when the key holds a
// "{...}" with something between the braces, only that part is hashed.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key)) % slotCount
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021), the hash Redis Cluster uses for slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
