// The app router: one entry per area.
import { router } from '../trpc/init.ts';
import { adminRouter } from './admin.ts';
import { authRouter } from './auth.ts';

export const appRouter = router({
  auth: authRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
