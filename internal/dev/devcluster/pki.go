package devcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ensurePKI creates, once per directory, what the control plane needs: a CA and a serving
// certificate for 127.0.0.1/localhost signed by it, an RSA key that signs service account
// tokens, and a static admin token. Existing files are kept, so a restarted cluster keeps its
// credentials and the tokens it issued.
func ensurePKI(pki string) (token string, err error) {
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return "", err
	}
	p := func(name string) string { return filepath.Join(pki, name) }

	if !exists(p("ca.crt")) || !exists(p("ca.key")) || !exists(p("apiserver.crt")) || !exists(p("apiserver.key")) {
		if err := writeServingCerts(pki); err != nil {
			return "", fmt.Errorf("devcluster: generating certificates: %w", err)
		}
	}
	if !exists(p("sa.key")) || !exists(p("sa.pub")) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", err
		}
		pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return "", err
		}
		if err := writePEM(p("sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
			return "", err
		}
		if err := writePEM(p("sa.pub"), "PUBLIC KEY", pub); err != nil {
			return "", err
		}
	}
	if !exists(p("token")) {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		if err := writeFileAtomic(p("token"), []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
			return "", err
		}
	}
	b, err := os.ReadFile(p("token"))
	if err != nil {
		return "", err
	}
	token = string(trimSpace(b))
	// The static token file of kube-apiserver: token,user,uid,"groups".
	line := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", token)
	if err := writeFileAtomic(p("tokens.csv"), []byte(line), 0o600); err != nil {
		return "", err
	}
	return token, nil
}

func writeServingCerts(pki string) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "arbiter-devcluster-ca"},
		NotBefore:             now,
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 96, 0, 1)},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name, typ string
		der       []byte
	}{
		{"ca.key", "EC PRIVATE KEY", caKeyDER},
		{"apiserver.key", "EC PRIVATE KEY", keyDER},
		{"apiserver.crt", "CERTIFICATE", der},
		{"ca.crt", "CERTIFICATE", caDER},
	} {
		if err := writePEM(filepath.Join(pki, f.name), f.typ, f.der); err != nil {
			return err
		}
	}
	return nil
}

func writePEM(path, typ string, der []byte) error {
	return writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// writeFileAtomic writes data to a temporary file next to path and renames it into place.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
