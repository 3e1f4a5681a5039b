module github.com/samsa-io/samsa

go 1.26.0

require (
	github.com/klauspost/compress v1.20.4
	github.com/magiconair/properties v1.8.10
	github.com/pierrec/lz4/v4 v4.1.33
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
