import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { onPath, toolNotFound } from './binaries.js';

/**
 * Artifacts from a Maven repository, fetched by Maven's own client, so the repository and any mirror or credentials
 * in ~/.m2/settings.xml apply and no registry host is written here. Used for what only Maven Central publishes for
 * this machine: Temporal's time-skipping test server (test/support/time-skipping.ts) and the quality benchmark's model
 * (bench/quality-model.ts).
 */
const run = promisify(execFile);

export interface MavenArtifact {
  groupId: string;
  artifactId: string;
  version: string;
}

const coordinates = (a: MavenArtifact) => `${a.groupId}:${a.artifactId}:${a.version}`;

/** The dependency plugin is pinned, so a build never depends on which version a mirror calls the newest. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

/** A project whose only dependency is `a`: `copy-dependencies` puts it and the jars it needs into one folder. */
const pom = (a: MavenArtifact) => `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.gristmill</groupId>
  <artifactId>maven-fetch</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>${a.groupId}</groupId>
      <artifactId>${a.artifactId}</artifactId>
      <version>${a.version}</version>
    </dependency>
  </dependencies>
</project>
`;

/**
 * Copies `artifact` into `outDir` (which is created), and with `withDependencies` every jar it needs at run time too.
 * Fails saying what to install when Maven is missing.
 */
export async function fetchMavenArtifact(
  artifact: MavenArtifact,
  outDir: string,
  o: { withDependencies?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const env = o.env ?? process.env;
  const mvn = await onPath('mvn', env);
  if (!mvn) {
    throw toolNotFound(`${coordinates(artifact)} cannot be fetched`, ['mvn is not on PATH'], [
      'install Maven: apt-get install maven (it brings a Java runtime), or brew install maven',
    ]);
  }
  await fs.mkdir(outDir, { recursive: true });
  const work = await fs.mkdtemp(path.join(path.dirname(outDir), '.maven-'));
  try {
    await fs.writeFile(path.join(work, 'pom.xml'), pom(artifact));
    const goal = o.withDependencies
      ? [`${DEPENDENCY_PLUGIN}:copy-dependencies`, '-DincludeScope=runtime']
      : [`${DEPENDENCY_PLUGIN}:copy-dependencies`, '-DexcludeTransitive=true'];
    await run(mvn, ['-q', '-B', '-Dstyle.color=never', '-f', path.join(work, 'pom.xml'), ...goal, `-DoutputDirectory=${outDir}`], {
      env,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 10 * 60_000,
    }).catch((err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`mvn could not fetch ${coordinates(artifact)}: ${(err.stdout ?? '') + (err.stderr ?? '') || err.message}`);
    });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
