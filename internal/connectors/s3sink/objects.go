package s3sink

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/samsa-io/samsa/connect"
)

// What each object is written with, as Confluent's S3 sink configures it:
// server-side encryption (s3.ssea.name with S3's or KMS's keys,
// s3.sse.kms.key.id, or the customer's key, s3.sse.customer.key: SSE-C),
// a canned ACL (s3.acl.canned), and tags (s3.object.tagging).

var (
	sseAlgorithms = []string{"", string(types.ServerSideEncryptionAes256), string(types.ServerSideEncryptionAwsKms)}
	cannedACLs    = []string{"", "private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read",
		"bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"}
)

type objectOptions struct {
	sse               types.ServerSideEncryption // SSE-S3 or SSE-KMS; empty with SSE-C
	kmsKeyID          *string
	customerAlgorithm *string // SSE-C: AES256, the key and its MD5, on every request that touches the object
	customerKey       *string
	customerKeyMD5    *string
	acl               types.ObjectCannedACL
	tagging           bool
}

func parseObjectOptions(c connect.Config) (objectOptions, error) {
	o := objectOptions{acl: types.ObjectCannedACL(c.String(cfgACLCanned)), tagging: c.Bool(cfgObjectTagging)}
	algo, kms, customer := c.String(cfgSSEA), c.String(cfgSSEKMSKeyID), c.Password(cfgSSECustomerKey)
	if kms != "" && algo != string(types.ServerSideEncryptionAwsKms) {
		return o, fmt.Errorf("Invalid value for configuration %s: a KMS key needs %s=aws:kms", cfgSSEKMSKeyID, cfgSSEA)
	}
	if customer == "" {
		o.sse, o.kmsKeyID = types.ServerSideEncryption(algo), optional(kms)
		return o, nil
	}
	// SSE-C: S3 encrypts with the customer's key, which it never keeps.
	if algo != "" && algo != string(types.ServerSideEncryptionAes256) {
		return o, fmt.Errorf("Invalid value %s for configuration %s: a customer key (%s) is used with AES256", algo, cfgSSEA, cfgSSECustomerKey)
	}
	key, err := base64.StdEncoding.DecodeString(customer)
	if err != nil || len(key) != 32 {
		return o, fmt.Errorf("Invalid value [hidden] for configuration %s: must be a 256-bit key in base64", cfgSSECustomerKey)
	}
	sum := md5.Sum(key)
	o.customerAlgorithm = optional(string(types.ServerSideEncryptionAes256))
	o.customerKey, o.customerKeyMD5 = optional(customer), optional(base64.StdEncoding.EncodeToString(sum[:]))
	return o, nil
}

// objectTags are an object's tags when s3.object.tagging is on, URL-encoded
// as S3's x-amz-tagging header takes them; "" otherwise.
func (w *partitionWriter) objectTags(o *sealedObject) string {
	if !w.cfg.objects.tagging {
		return ""
	}
	return url.Values{
		"startOffset": {strconv.FormatInt(o.start, 10)},
		"endOffset":   {strconv.FormatInt(o.end, 10)},
		"recordCount": {strconv.FormatInt(o.records, 10)},
	}.Encode()
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
