package server

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
)

// errTLSUpdate is Redis's CONFIG SET reason when the TLS settings cannot
// be loaded (the details go to the log).
const errTLSUpdate = "Unable to update TLS configuration. Check server logs."

var tlsVersions = map[string]uint16{
	"tlsv1":   tls.VersionTLS10,
	"tlsv1.1": tls.VersionTLS11,
	"tlsv1.2": tls.VersionTLS12,
	"tlsv1.3": tls.VersionTLS13,
}

// configureTLS builds the TLS configuration from the tls-* parameters
// when tls-port is set and installs it for new handshakes (connections
// already established keep theirs). It returns Redis's reason on failure,
// after logging the detail as Redis does. The engine lock is held.
func (s *Server) configureTLS() string {
	if s.conf.params["tls-port"] == "0" {
		return ""
	}
	conf, detail := buildTLSConfig(s.conf.params)
	if detail != "" {
		s.log.Warn(detail)
		return errTLSUpdate
	}
	s.net.tlsConf.Store(conf)
	return ""
}

// buildTLSConfig reads the certificate, key and CA files and maps
// tls-auth-clients and tls-protocols onto crypto/tls. Go can only accept a
// contiguous range of versions: the lowest and highest listed are used.
func buildTLSConfig(p map[string]string) (*tls.Config, string) {
	certFile, keyFile, caFile, caDir := p["tls-cert-file"], p["tls-key-file"], p["tls-ca-cert-file"], p["tls-ca-cert-dir"]
	if certFile == "" {
		return nil, "No tls-cert-file configured!"
	}
	if keyFile == "" {
		return nil, "No tls-key-file configured!"
	}
	auth := p["tls-auth-clients"]
	if caFile == "" && caDir == "" && auth != "no" {
		return nil, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "Failed to load certificate: " + certFile + ": " + err.Error()
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	if caFile != "" || caDir != "" {
		pool, detail := loadCAs(caFile, caDir)
		if detail != "" {
			return nil, "Failed to configure CA certificate(s) file/directory: " + detail
		}
		conf.ClientCAs = pool
	}
	switch auth {
	case "yes":
		conf.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		conf.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		conf.ClientAuth = tls.NoClientCert
	}
	if protos := strings.Fields(p["tls-protocols"]); len(protos) > 0 {
		var lo, hi uint16
		for _, name := range protos {
			v, ok := tlsVersions[strings.ToLower(name)]
			if !ok {
				return nil, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."
			}
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
		conf.MinVersion, conf.MaxVersion = lo, hi
	}
	return conf, ""
}

// loadCAs reads the CA certificates of tls-ca-cert-file and of every file
// in tls-ca-cert-dir (OpenSSL's hashed names included; files without a
// PEM certificate are skipped there).
func loadCAs(file, dir string) (*x509.CertPool, string) {
	pool := x509.NewCertPool()
	if file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, err.Error()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "no certificate in " + file
		}
	}
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err.Error()
		}
		for _, e := range entries {
			if pem, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(pem)
			}
		}
	}
	return pool, ""
}
