import { FakeAsr } from '../../fakes/fake-asr.js';
import { FakePushService } from '../../fakes/push-service.js';
import { FakeLlm, FakeRecipeManager, FakeSocialSite, FakeYtDlp } from '../../fakes/recipe-fakes.js';
import { recipeEnv } from './recipes.js';

/** Every third party of every service, faked on 127.0.0.1, for tests that run the three services at once. */
export interface AllFakes {
  asr: FakeAsr;
  push: FakePushService;
  llm: FakeLlm;
  manager: FakeRecipeManager;
  site: FakeSocialSite;
  ytdlp: FakeYtDlp;
  /** The configuration that points the services at them (the API and every worker get it). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startAllFakes(): Promise<AllFakes> {
  const [asr, push, llm, manager, site, ytdlp] = await Promise.all([
    FakeAsr.start(),
    FakePushService.start(),
    FakeLlm.start(),
    FakeRecipeManager.start('mealie'),
    FakeSocialSite.start(),
    FakeYtDlp.create(),
  ]);
  return {
    asr,
    push,
    llm,
    manager,
    site,
    ytdlp,
    env: { ASR_BASE_URL: asr.url, PUSH_CA_FILE: push.caFile, ...recipeEnv({ llm, manager, ytdlp }) },
    close: async () => {
      await Promise.allSettled([asr.close(), push.close(), llm.close(), manager.close(), site.close(), ytdlp.remove()]);
    },
  };
}
